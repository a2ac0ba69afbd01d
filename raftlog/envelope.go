package raftlog

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
)

// A snapshot's data (raftpb.Snapshot.Data) is raftlog's envelope around the
// Applier's bytes, so the membership travels with the snapshot:
//
//	magic        (4 bytes, envelopeMagic)
//	version      (1 byte, envelopeVersion)
//	member count (uvarint)
//	per member, by increasing id:
//	  id             (uvarint)
//	  context length (uvarint)
//	  context
//	removed count (uvarint; version 2 on)
//	per removed member, by increasing id:
//	  id             (uvarint)
//	  removal index  (uvarint)
//	the Applier's data (the rest)
//
// The ConfState (who votes, who learns) is in the snapshot's metadata.
// Version 1, written by earlier releases, has no removed members: a node
// that installs one learns no removal from it. Integrity is checked
// elsewhere: by the snapshot file's CRC on disk and by a SHA-256 in
// transfer.
const (
	envelopeMagic   = "RLSE"
	envelopeVersion = 2
)

// snapMembers is the membership a snapshot carries besides its ConfState:
// the member contexts and the ids the cluster removed, so that a node
// that learns the membership from a snapshot knows both.
type snapMembers struct {
	// contexts are every member's context, by id.
	contexts map[uint64][]byte
	// removed maps the ids of removed members to the index of their
	// removal; ids are never reused, so these stay refused.
	removed map[uint64]uint64
}

// envelopeHeader returns the envelope of sm without the Applier's data,
// which follows it: the snapshot's data is the header, then the data,
// written one after the other (the data is not copied).
func envelopeHeader(sm snapMembers) []byte {
	size := len(envelopeMagic) + 1 + 2*binary.MaxVarintLen64 + 2*binary.MaxVarintLen64*len(sm.removed)
	for _, ctx := range sm.contexts {
		size += 2*binary.MaxVarintLen64 + len(ctx)
	}
	b := make([]byte, 0, size)
	b = append(b, envelopeMagic...)
	b = append(b, envelopeVersion)
	b = binary.AppendUvarint(b, uint64(len(sm.contexts)))
	for _, id := range slices.Sorted(maps.Keys(sm.contexts)) {
		ctx := sm.contexts[id]
		b = binary.AppendUvarint(b, id)
		b = binary.AppendUvarint(b, uint64(len(ctx)))
		b = append(b, ctx...)
	}
	b = binary.AppendUvarint(b, uint64(len(sm.removed)))
	for _, id := range slices.Sorted(maps.Keys(sm.removed)) {
		b = binary.AppendUvarint(b, id)
		b = binary.AppendUvarint(b, sm.removed[id])
	}
	return b
}

// envelopeReader reads the fields of an envelope in order.
type envelopeReader struct {
	rest []byte
}

// uvarint reads the next uvarint, what naming it in the error.
func (r *envelopeReader) uvarint(what string) (uint64, error) {
	v, n := binary.Uvarint(r.rest)
	if n <= 0 {
		return 0, fmt.Errorf("raftlog: snapshot envelope truncated in %s", what)
	}
	r.rest = r.rest[n:]
	return v, nil
}

// count reads a count of entries of at least min bytes each, refusing one
// the remaining bytes cannot hold.
func (r *envelopeReader) count(what string, min int) (uint64, error) {
	n, err := r.uvarint(what + " count")
	if err != nil {
		return 0, err
	}
	if n > uint64(len(r.rest)/min) {
		return 0, fmt.Errorf("raftlog: snapshot envelope claims %d %s in %d bytes", n, what, len(r.rest))
	}
	return n, nil
}

// decodeEnvelope splits a snapshot's data into the membership it carries
// (new maps and slices) and the Applier's data (aliasing b). A version 1
// envelope has no removed members (an empty map).
func decodeEnvelope(b []byte) (sm snapMembers, data []byte, err error) {
	if len(b) < len(envelopeMagic)+1 || string(b[:len(envelopeMagic)]) != envelopeMagic {
		return sm, nil, fmt.Errorf("raftlog: snapshot data (%d bytes) was not written by raftlog", len(b))
	}
	version := b[len(envelopeMagic)]
	if version != 1 && version != envelopeVersion {
		return sm, nil, fmt.Errorf("raftlog: snapshot envelope version %d, this binary reads versions 1 to %d", version, envelopeVersion)
	}
	r := &envelopeReader{rest: b[len(envelopeMagic)+1:]}
	count, err := r.count("members", 2)
	if err != nil {
		return sm, nil, err
	}
	sm.contexts = make(map[uint64][]byte, count)
	for range count {
		id, err := r.uvarint("member id")
		if err != nil {
			return sm, nil, err
		}
		n, err := r.uvarint("member context length")
		if err != nil {
			return sm, nil, err
		}
		if n > uint64(len(r.rest)) {
			return sm, nil, fmt.Errorf("raftlog: snapshot envelope truncated in the context of member %d", id)
		}
		sm.contexts[id] = slices.Clone(r.rest[:n:n])
		r.rest = r.rest[n:]
	}
	sm.removed = map[uint64]uint64{}
	if version == 1 {
		return sm, r.rest, nil
	}
	if count, err = r.count("removed members", 2); err != nil {
		return sm, nil, err
	}
	for range count {
		id, err := r.uvarint("removed member id")
		if err != nil {
			return sm, nil, err
		}
		if sm.removed[id], err = r.uvarint("removal index"); err != nil {
			return sm, nil, err
		}
	}
	return sm, r.rest, nil
}
