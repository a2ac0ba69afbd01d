package bench

import (
	"context"
	"fmt"
)

// procCounters are a process's cumulative CPU time and context switches,
// as /proc reports them.
type procCounters struct {
	CPUSeconds  float64
	CtxSwitches int64
}

// ServerLoad is what the member processes the benchmark started spent on
// the table phase alone: sampled just before the first CREATE TABLE and
// just after the last is acknowledged. Against --endpoints (processes the
// benchmark does not own) the figures are zero and ServerLoadNote says
// why.
type ServerLoad struct {
	// ServerCPUSeconds is the user and system CPU time of the members,
	// summed (the etcd peer's field of the same name).
	ServerCPUSeconds float64 `json:"server_cpu_seconds"`
	// ServerCPUPerNodeSeconds is each member's, in member order.
	ServerCPUPerNodeSeconds []float64 `json:"server_cpu_per_node_seconds,omitempty"`
	// ServerCPULeader is the index in ServerCPUPerNodeSeconds of the
	// member that led when the phase started (-1: not measured).
	ServerCPULeader int `json:"server_cpu_leader"`
	// CPUPerDDLMs is ServerCPUSeconds*1000/tables.
	CPUPerDDLMs float64 `json:"cpu_per_ddl_ms"`
	// CtxSwitchesPerDDL is the members' voluntary and nonvoluntary context
	// switches, summed, per table.
	CtxSwitchesPerDDL float64 `json:"ctx_switches_per_ddl"`
	// CtxSwitchesPerNodePerDDL is each member's, per table, in member
	// order (the leader's is at ServerCPULeader).
	CtxSwitchesPerNodePerDDL []float64 `json:"ctx_switches_per_node_per_ddl,omitempty"`
	// PreparedPerDDL and ExecutedOnApplyPerDDL count how the members got
	// each DDL's result (metalog_ddl_executions_total), summed, per
	// table: the result the pre-check of the member that took the
	// request had prepared, or an execution on apply. With 3 members and
	// one client sending to the leader: 1 and 2.
	PreparedPerDDL        float64 `json:"prepared_per_ddl"`
	ExecutedOnApplyPerDDL float64 `json:"executed_on_apply_per_ddl"`
	// ServerLoadNote says why the figures above are zero, when they are.
	ServerLoadNote string `json:"server_load_note,omitempty"`
}

// Notes of ServerLoad.ServerLoadNote.
const (
	noteEndpoints = "not measured: --endpoints targets processes the benchmark did not start"
	noteNoProc    = "not measured: this system has no /proc"
)

// loadSample is the members' counters at one moment, and which one led.
type loadSample struct {
	leader int
	procs  []procCounters
	// prepared and executed are the members' metalog_ddl_executions_total,
	// summed.
	prepared, executed uint64
}

// The series of metalog_ddl_executions_total.
const (
	preparedSeries = `metalog_ddl_executions_total{how="prepared"}`
	executedSeries = `metalog_ddl_executions_total{how="executed"}`
)

// sampleLoad reads every member's counters; leader is the index of the
// leading member, found once before the phase and carried over.
func (c *cluster) sampleLoad(ctx context.Context, leader int) (loadSample, error) {
	s := loadSample{leader: leader}
	for _, nd := range c.nodes {
		p, err := readProcCounters(nd.cmd.Process.Pid)
		if err != nil {
			return loadSample{}, fmt.Errorf("bench: server load of %s: %w", nd.name, err)
		}
		s.procs = append(s.procs, p)
		v, err := nd.metrics(ctx, preparedSeries, executedSeries)
		if err != nil {
			return loadSample{}, err
		}
		s.prepared, s.executed = s.prepared+v[0], s.executed+v[1]
	}
	return s, nil
}

// startLoad finds the leader and takes the sample the table phase's load
// is measured from.
func (c *cluster) startLoad(ctx context.Context) (loadSample, error) {
	leader, err := c.leader(ctx)
	if err != nil {
		return loadSample{}, err
	}
	for i, nd := range c.nodes {
		if nd == leader {
			return c.sampleLoad(ctx, i)
		}
	}
	panic(fmt.Sprintf("bench: leader %s is not one of the cluster's members", leader.name))
}

// serverLoad is the load between samples before and after, over tables
// DDLs.
func serverLoad(before, after loadSample, tables int) ServerLoad {
	if !procCountersMeasured {
		return unmeasuredLoad(noteNoProc)
	}
	l := ServerLoad{ServerCPULeader: before.leader}
	var switches int64
	for i := range after.procs {
		cpu := after.procs[i].CPUSeconds - before.procs[i].CPUSeconds
		l.ServerCPUPerNodeSeconds = append(l.ServerCPUPerNodeSeconds, cpu)
		l.ServerCPUSeconds += cpu
		n := after.procs[i].CtxSwitches - before.procs[i].CtxSwitches
		l.CtxSwitchesPerNodePerDDL = append(l.CtxSwitchesPerNodePerDDL, float64(n)/float64(tables))
		switches += n
	}
	l.CPUPerDDLMs = l.ServerCPUSeconds * 1000 / float64(tables)
	l.CtxSwitchesPerDDL = float64(switches) / float64(tables)
	l.PreparedPerDDL = float64(after.prepared-before.prepared) / float64(tables)
	l.ExecutedOnApplyPerDDL = float64(after.executed-before.executed) / float64(tables)
	return l
}

// unmeasuredLoad is a ServerLoad without figures, saying why.
func unmeasuredLoad(note string) ServerLoad {
	return ServerLoad{ServerCPULeader: -1, ServerLoadNote: note}
}
