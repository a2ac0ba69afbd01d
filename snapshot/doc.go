// Package snapshot is the versioned binary encoding of a ClusterMetadata
// snapshot, and the size guard that keeps snapshots under
// max_mutation_size, so that the raft log can always be compacted and a
// snapshot never silently stops being written.
//
// It owns the snapshot format (Encode, Decode, the section tags and the
// errors that name what is corrupt and where) and the Guard that warns at
// WarnPercent of the limit and refuses snapshots over it. It does not own
// when to snapshot or restore (raftlog asks the metadata state machine),
// where the bytes are kept or how they travel to a peer (raftlog's
// snapshot files and transport), nor what the opaque sections and request
// records mean (their owners encode them: package metadata stores the
// guardrail settings, in guardrails.AppendSettings form, and the request
// records).
//
// The encoding is a pure function of its input: Encode and Decode do no
// I/O, read no clock and are deterministic, so every node encodes the same
// metadata to the same bytes.
//
// Layout (all integers are unsigned varints unless noted):
//
//	"MLSN" version(1 byte)
//	epoch index schema-digest(32 bytes)
//	sections: tag length body, tags strictly increasing
//	  1 keyspaces  count, then per record: length, schema.AppendKeyspace
//	  2 types      count, then length, schema.AppendUserType
//	  3 tables     count, then length, schema.AppendTable
//	  4 indexes    count, then length, schema.AppendIndex
//	  5 requests   count, then per request: length id, length record
//	  6 functions  count, then length, schema.AppendFunction; only when
//	               the schema has functions or aggregates
//	  others       opaque (Contents.Sections): SectionGuardrails (16),
//	               SectionHistory (17) in backups only,
//	               SectionKeyspaceGuardrails (18), SectionHistoryName (19)
//	SHA-256 of everything before it (32 bytes)
//
// Objects are in keyspace order and, within a keyspace, in name order, so
// Decode rebuilds the schema with a schema.Builder (PutKeyspace, then
// PutUserType, then PutTable, which builds a keyspace's tables in bulk,
// then PutIndex, then PutFunction) and checks the result against the
// stored digest.
// Records walks the same records without decoding them, for a reader that
// stores them as they are (a restore writes the schema store from them
// while Decode checks the snapshot). A
// section with a tag this build does not know is kept opaque in
// Contents.Sections instead of failing, so that nodes carry along sections
// added after them. The
// guardrail settings already travel that way: package metadata writes
// them as SectionGuardrails once they have been set through the log (a
// snapshot without that section means the defaults).
//
// Usage:
//
//	data := snapshot.Encode(nil, &snapshot.Contents{Epoch: m.Epoch, Index: idx, Schema: m.Schema})
//	g := snapshot.NewGuard(16 << 20)
//	if warn, err := g.Check(len(data)); err != nil {
//		// refuse the snapshot: errors.Is(err, snapshot.ErrTooLarge)
//	} else if warn {
//		// log a warning: the snapshot passed 75% of the limit
//	}
//	c, err := snapshot.Decode(data) // errors.Is(err, snapshot.ErrCorrupt) on bad input
package snapshot
