package raftlog

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
)

// A snapshot's data (raftpb.Snapshot.Data) is raftlog's envelope around the
// Applier's bytes, so the member contexts travel with the snapshot:
//
//	magic        (4 bytes, envelopeMagic)
//	version      (1 byte, envelopeVersion)
//	member count (uvarint)
//	per member, by increasing id:
//	  id             (uvarint)
//	  context length (uvarint)
//	  context
//	the Applier's data (the rest)
//
// The ConfState (who votes, who learns) is in the snapshot's metadata.
// Integrity is checked elsewhere: by the snapshot file's CRC on disk and by
// a SHA-256 in transfer.
const (
	envelopeMagic   = "RLSE"
	envelopeVersion = 1
)

// envelopeHeader returns the envelope of members without the Applier's
// data, which follows it: the snapshot's data is the header, then the
// data, written one after the other (the data is not copied).
func envelopeHeader(members map[uint64][]byte) []byte {
	size := len(envelopeMagic) + 1 + binary.MaxVarintLen64
	for _, ctx := range members {
		size += 2*binary.MaxVarintLen64 + len(ctx)
	}
	b := make([]byte, 0, size)
	b = append(b, envelopeMagic...)
	b = append(b, envelopeVersion)
	b = binary.AppendUvarint(b, uint64(len(members)))
	for _, id := range slices.Sorted(maps.Keys(members)) {
		ctx := members[id]
		b = binary.AppendUvarint(b, id)
		b = binary.AppendUvarint(b, uint64(len(ctx)))
		b = append(b, ctx...)
	}
	return b
}

// decodeEnvelope splits a snapshot's data into the member contexts (new
// slices) and the Applier's data (aliasing b).
func decodeEnvelope(b []byte) (members map[uint64][]byte, data []byte, err error) {
	if len(b) < len(envelopeMagic)+1 || string(b[:len(envelopeMagic)]) != envelopeMagic {
		return nil, nil, fmt.Errorf("raftlog: snapshot data (%d bytes) was not written by raftlog", len(b))
	}
	if v := b[len(envelopeMagic)]; v != envelopeVersion {
		return nil, nil, fmt.Errorf("raftlog: snapshot envelope version %d, this binary reads version %d", v, envelopeVersion)
	}
	rest := b[len(envelopeMagic)+1:]
	uvarint := func(what string) (uint64, error) {
		v, n := binary.Uvarint(rest)
		if n <= 0 {
			return 0, fmt.Errorf("raftlog: snapshot envelope truncated in %s", what)
		}
		rest = rest[n:]
		return v, nil
	}
	count, err := uvarint("member count")
	if err != nil {
		return nil, nil, err
	}
	if count > uint64(len(rest)) {
		return nil, nil, fmt.Errorf("raftlog: snapshot envelope claims %d members in %d bytes", count, len(rest))
	}
	members = make(map[uint64][]byte, count)
	for range count {
		id, err := uvarint("member id")
		if err != nil {
			return nil, nil, err
		}
		n, err := uvarint("member context length")
		if err != nil {
			return nil, nil, err
		}
		if n > uint64(len(rest)) {
			return nil, nil, fmt.Errorf("raftlog: snapshot envelope truncated in the context of member %d", id)
		}
		members[id] = slices.Clone(rest[:n:n])
		rest = rest[n:]
	}
	return members, rest, nil
}
