package raftlog

import (
	"encoding/binary"
	"fmt"
)

// A proposal's entry data is a header followed by the caller's payload:
//
//	version (1 byte, headerVersion)
//	proposer node id (uvarint)
//	proposer boot counter (uvarint)
//	sequence number within that boot (uvarint)
//	payload
//
// The apply loop uses (node id, boot, seq) to find the waiting proposer; the
// boot counter keeps ids unique across restarts of the same node.
const (
	headerVersion = 1
	maxHeaderLen  = 1 + 3*binary.MaxVarintLen64
)

type proposalID struct {
	node, boot, seq uint64
}

// encodeProposal returns a new slice holding the header and payload (one
// allocation).
func encodeProposal(id proposalID, payload []byte) []byte {
	b := make([]byte, 0, maxHeaderLen+len(payload))
	b = append(b, headerVersion)
	b = binary.AppendUvarint(b, id.node)
	b = binary.AppendUvarint(b, id.boot)
	b = binary.AppendUvarint(b, id.seq)
	return append(b, payload...)
}

// decodeProposal splits entry data into id and payload without allocating;
// payload aliases data.
func decodeProposal(data []byte) (proposalID, []byte, error) {
	var id proposalID
	if len(data) == 0 || data[0] != headerVersion {
		return id, nil, fmt.Errorf("raftlog: entry header version %v, want %d", firstByte(data), headerVersion)
	}
	rest := data[1:]
	for _, f := range []*uint64{&id.node, &id.boot, &id.seq} {
		v, n := binary.Uvarint(rest)
		if n <= 0 {
			return id, nil, fmt.Errorf("raftlog: truncated entry header (%d bytes)", len(data))
		}
		*f = v
		rest = rest[n:]
	}
	return id, rest, nil
}

func firstByte(b []byte) any {
	if len(b) == 0 {
		return "none"
	}
	return b[0]
}
