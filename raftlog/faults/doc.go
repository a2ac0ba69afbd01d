// Package faults injects network faults into raftlog's Transport for tests:
// an Injector drops messages between members, delays what is sent to a
// member and corrupts snapshots in transit.
//
// Set it as raftlog.TransportConfig.Faults. Several transports may share one,
// so a test partitions a cluster by changing one value; its methods are safe
// for concurrent use. Where each fault takes effect (when sending or
// receiving, per batch or per snapshot) is the Transport's business,
// described by raftlog.Faults.
//
//	inj := &faults.Injector{}
//	tr := raftlog.NewTransport(raftlog.TransportConfig{ID: 1, Faults: inj})
//	inj.Partition([]uint64{1}, []uint64{2, 3}) // member 1 is cut off
//	// ... the cluster elects a leader among 2 and 3 ...
//	inj.Heal()
package faults
