package faults_test

import (
	"slices"
	"testing"
	"time"

	"github.com/metalog/metalog/raftlog"
	"github.com/metalog/metalog/raftlog/faults"
)

var _ raftlog.Faults = (*faults.Injector)(nil)

func TestInjector(t *testing.T) {
	var nilFaults *faults.Injector
	if nilFaults.Dropped(1, 2) || nilFaults.DelayFor(2) != 0 || nilFaults.CorruptNextSnapshot(2) {
		t.Error("a nil *Injector injects faults")
	}
	f := &faults.Injector{}
	f.Partition([]uint64{1}, []uint64{2, 3})
	f.Drop(4, 5)
	f.Delay(3, time.Second)
	for _, tt := range []struct {
		from, to uint64
		want     bool
	}{{1, 2, true}, {2, 1, true}, {3, 1, true}, {2, 3, false}, {4, 5, true}, {5, 4, false}} {
		if got := f.Dropped(tt.from, tt.to); got != tt.want {
			t.Errorf("Dropped(%d, %d) = %v, want %v", tt.from, tt.to, got, tt.want)
		}
	}
	if f.DelayFor(3) != time.Second || f.DelayFor(2) != 0 {
		t.Errorf("delays: 3 -> %v, 2 -> %v", f.DelayFor(3), f.DelayFor(2))
	}
	f.Delay(3, 0)
	if f.DelayFor(3) != 0 {
		t.Error("Delay(3, 0) kept the delay")
	}
	f.Delay(3, time.Second)
	f.Heal()
	if f.Dropped(1, 2) || f.DelayFor(3) != 0 {
		t.Error("Heal kept faults")
	}
}

func TestInjectorCorruptSnapshots(t *testing.T) {
	f := &faults.Injector{}
	f.CorruptSnapshots(2, 2)
	got := []bool{f.CorruptNextSnapshot(2), f.CorruptNextSnapshot(3), f.CorruptNextSnapshot(2), f.CorruptNextSnapshot(2)}
	if want := []bool{true, false, true, false}; !slices.Equal(got, want) {
		t.Errorf("CorruptNextSnapshot answers %v, want %v", got, want)
	}
	f.CorruptSnapshots(2, 1)
	f.CorruptSnapshots(2, 0)
	if f.CorruptNextSnapshot(2) {
		t.Error("CorruptSnapshots(2, 0) kept the corruption")
	}
}
