// Package faults is a network fault injector for tests of raftlog's
// Transport: an Injector drops messages between members, delays what is
// sent to a member and corrupts snapshots in transit. Set it as
// raftlog.TransportConfig.Faults; several transports may share one, so a
// test partitions a cluster by changing one value.
//
// It owns the faults' bookkeeping only; where a fault takes effect (when
// sending, when receiving, per batch or per snapshot) is the Transport's
// business, described by raftlog.Faults.
//
// Usage:
//
//	inj := &faults.Injector{}
//	tr := raftlog.NewTransport(raftlog.TransportConfig{ID: 1, Faults: inj})
//	inj.Partition([]uint64{1}, []uint64{2, 3}) // member 1 is cut off
//	// ... the cluster elects a leader among 2 and 3 ...
//	inj.Heal()
package faults
