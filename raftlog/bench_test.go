package raftlog

import (
	"context"
	"testing"
)

// discard is an Applier that does nothing, so benchmarks measure the log.
type discard struct{ results []Result }

func (d *discard) Apply(entries []Entry) []Result {
	d.results = d.results[:0]
	for range entries {
		d.results = append(d.results, Result{})
	}
	return d.results
}

// BenchmarkProposeSingleNode measures one proposal at a time through a
// single-node group with fsync on: the latency floor of a DDL.
func BenchmarkProposeSingleNode(b *testing.B) {
	n := startSingle(b, b.TempDir(), &discard{}, 0)
	waitReady(b, n)
	ctx := context.Background()
	data := make([]byte, 256)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := n.Propose(ctx, data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkProposeSingleNodeParallel measures throughput when concurrent
// proposals share fsyncs.
func BenchmarkProposeSingleNodeParallel(b *testing.B) {
	n := startSingle(b, b.TempDir(), &discard{}, 0)
	waitReady(b, n)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(32)
	b.RunParallel(func(pb *testing.PB) {
		data := make([]byte, 256)
		for pb.Next() {
			if _, err := n.Propose(ctx, data); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
