// Package snapshot is the versioned binary encoding of the cluster metadata's
// snapshots and backups, with the Guard that keeps them under
// max_mutation_size so that a snapshot never silently stops being written.
//
// It owns the formats and the size Guard. A member's snapshot is a store
// snapshot (EncodeStore, whose comment specifies it, DecodeStore and
// StoreSnapshot.WriteFile): the schema store's whole file, compressed in
// chunks and checksummed, which the receiver installs as its own store.
// Backups, and the snapshots of members before store snapshots, are record
// streams (Encode, whose comment specifies it, Decode and Records); IsStore
// tells the two apart. It does not decide when to snapshot or restore
// (raftlog asks the state machine), where the bytes are kept or how they
// travel (raftlog), or what the opaque sections and request records mean:
// their owners, mostly package metadata, encode them.
//
// Encode and Decode do no I/O and are deterministic: every node encodes the
// same metadata to the same bytes. Every error of Decode matches ErrCorrupt.
// A Guard is not safe for concurrent use.
//
//	data := snapshot.Encode(nil, &snapshot.Contents{Epoch: epoch, Index: index, Schema: s})
//	guard := snapshot.NewGuard(maxMutationSize) // kept from one snapshot to the next
//	if warn, err := guard.Check(len(data)); err != nil {
//		// refuse it: errors.Is(err, snapshot.ErrTooLarge)
//	} else if warn {
//		// log a warning: the size reached WarnPercent of the limit
//	}
//	c, err := snapshot.Decode(data) // errors.Is(err, snapshot.ErrCorrupt) on bad input
//
//	data = snapshot.EncodeStore(nil, index, epoch, file) // file: a store's bytes
//	s, err := snapshot.DecodeStore(data)                 // magic, version, checksum
//	err = s.WriteFile(w)                                 // the file, chunk by chunk
package snapshot
