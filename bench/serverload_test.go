package bench

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// TestReadProcCounters reads this test process's own counters: they exist,
// and CPU time burnt in between shows up in the second reading.
func TestReadProcCounters(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	before, err := readProcCounters(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if before.CPUSeconds < 0 || before.CtxSwitches <= 0 {
		t.Fatalf("counters %+v: want the context switches of a running process", before)
	}
	// Burn CPU until the kernel's 10 ms ticks show it (bounded: the clock
	// only stops a broken reader from spinning forever).
	deadline := time.Now().Add(30 * time.Second)
	after := before
	for x := uint64(1); after.CPUSeconds <= before.CPUSeconds; x = x*6364136223846793005 + 1 {
		if time.Now().After(deadline) {
			t.Fatalf("CPU time stayed at %v s while this process spun", before.CPUSeconds)
		}
		if x%1024 == 0 {
			if after, err = readProcCounters(os.Getpid()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if after.CtxSwitches < before.CtxSwitches {
		t.Errorf("context switches went from %d down to %d", before.CtxSwitches, after.CtxSwitches)
	}
}

// TestReadProcCountersMissing: a process that does not exist is an error,
// not zero figures.
func TestReadProcCountersMissing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	if _, err := readProcCounters(1 << 30); err == nil {
		t.Error("counters of pid 1<<30: want an error")
	}
}

// TestServerLoad: the load is the difference of the samples, summed over
// members and divided by the tables.
func TestServerLoad(t *testing.T) {
	if !procCountersMeasured {
		t.Skip("no /proc: the load is not measured")
	}
	before := loadSample{leader: 1, procs: []procCounters{{1, 100}, {2, 200}, {3, 300}}, prepared: 10, executed: 20}
	after := loadSample{leader: 1, procs: []procCounters{{1.5, 400}, {4, 900}, {3.5, 600}}, prepared: 1010, executed: 2020}
	l := serverLoad(before, after, 1000)
	if l.PreparedPerDDL != 1 || l.ExecutedOnApplyPerDDL != 2 {
		t.Errorf("prepared %v and executed %v per DDL, want 1 and 2", l.PreparedPerDDL, l.ExecutedOnApplyPerDDL)
	}
	want := ServerLoad{ServerCPUSeconds: 3, ServerCPUPerNodeSeconds: []float64{0.5, 2, 0.5}, ServerCPULeader: 1, CPUPerDDLMs: 3, CtxSwitchesPerDDL: 1.3}
	if l.ServerCPUSeconds != want.ServerCPUSeconds || l.ServerCPULeader != want.ServerCPULeader || l.CPUPerDDLMs != want.CPUPerDDLMs ||
		l.CtxSwitchesPerDDL != want.CtxSwitchesPerDDL || len(l.ServerCPUPerNodeSeconds) != 3 || l.ServerCPUPerNodeSeconds[1] != 2 || l.ServerLoadNote != "" {
		t.Errorf("serverLoad = %+v, want %+v", l, want)
	}
	if got := l.CtxSwitchesPerNodePerDDL; len(got) != 3 || got[0] != 0.3 || got[1] != 0.7 || got[2] != 0.3 {
		t.Errorf("context switches per member per DDL %v, want [0.3 0.7 0.3]", got)
	}
	if u := unmeasuredLoad(noteEndpoints); u.ServerCPUSeconds != 0 || u.ServerCPULeader != -1 || u.ServerLoadNote == "" {
		t.Errorf("unmeasured load %+v: want zero figures, no leader and a note", u)
	}
}
