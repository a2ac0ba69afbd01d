package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/metalog/metalog/bench"
)

// TestPrintServerLoad: the human output of bench tables shows the members'
// CPU, per member with the leader, per DDL and the context switches, or,
// when they were not measured, why.
func TestPrintServerLoad(t *testing.T) {
	var b bytes.Buffer
	printServerLoad(&b, bench.ServerLoad{ServerCPUSeconds: 3, ServerCPUPerNodeSeconds: []float64{1.5, 0.75, 0.75}, ServerCPULeader: 0, CPUPerDDLMs: 1, CtxSwitchesPerDDL: 45.5,
		CtxSwitchesPerNodePerDDL: []float64{21.5, 12, 12}})
	for _, want := range []string{"server CPU         3.00 s (per node: 1.50, 0.75, 0.75; leader n1)", "CPU per DDL        1.000 ms", "ctx switches/DDL   45.5 (per node: 21.5, 12.0, 12.0)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output %q lacks %q", b.String(), want)
		}
	}
	b.Reset()
	printServerLoad(&b, bench.ServerLoad{ServerCPULeader: -1, ServerLoadNote: "not measured: --endpoints targets processes the benchmark did not start"})
	if got := b.String(); !strings.Contains(got, "not measured: --endpoints") || strings.Contains(got, "CPU per DDL") {
		t.Errorf("output without measurements %q: want the note alone", got)
	}
}

// TestBenchTablesProtocolFlag: an unknown --protocol, and cql against
// --endpoints (gRPC addresses), are refused before anything starts, with
// a message naming the flag and what it takes.
func TestBenchTablesProtocolFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "tables", "--protocol", "http"}, `bench: --protocol "http": want grpc or cql`},
		{[]string{"bench", "tables", "--protocol", "CQL"}, `bench: --protocol "CQL": want grpc or cql`},
		{[]string{"bench", "tables", "--protocol", "cql", "--endpoints", "127.0.0.1:1"}, "bench: --protocol cql needs the benchmark to start the cluster"},
	} {
		root := newRootCmd()
		root.SetArgs(tc.args)
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		if err := root.Execute(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestPrintTablesSaysProtocol: the human output of bench tables names the
// protocol the DDL went over.
func TestPrintTablesSaysProtocol(t *testing.T) {
	var b bytes.Buffer
	printTables(&b, &bench.Result{Nodes: 3, Tables: 10, Clients: 1, Target: bench.TargetAll, Protocol: bench.ProtocolCQL, BucketMeanMs: []float64{1}})
	if first, _, _ := strings.Cut(b.String(), "\n"); first != "metalog  nodes=3 tables=10 clients=1 target=all protocol=cql" {
		t.Errorf("first line %q: want the run described with protocol=cql", first)
	}
}
