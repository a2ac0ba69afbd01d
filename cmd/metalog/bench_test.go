package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/metalog/metalog/bench"
)

// TestPrintServerLoad: the human output of bench tables shows the members'
// CPU, per member with the leader, per DDL and the context switches, or,
// when they were not measured, why.
func TestPrintServerLoad(t *testing.T) {
	var b bytes.Buffer
	printServerLoad(&b, bench.ServerLoad{ServerCPUSeconds: 3, ServerCPUPerNodeSeconds: []float64{1.5, 0.75, 0.75}, ServerCPULeader: 0, CPUPerDDLMs: 1, CtxSwitchesPerDDL: 45.5})
	for _, want := range []string{"server CPU         3.00 s (per node: 1.50, 0.75, 0.75; leader n1)", "CPU per DDL        1.000 ms", "ctx switches/DDL   45.5"} {
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
