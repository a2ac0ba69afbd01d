package metadata

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// HistoryName is the name a cluster gave the history its epochs count
// in: a KindNameHistory command, applied through the log, so that every
// member of the cluster holds the same. A history id made from the
// cluster id alone would be the same for two clusters restored from the
// same backup, or bootstrapped twice, with the same founding members,
// although their epochs name other changes; a random nonce chosen by the
// cluster itself, once, is new every time. The state machine keeps one
// name: the one of the cluster id of the last mark that changed it.
// After a restore or a forced new cluster (a new cluster id) it still
// holds the old cluster's, which names no history of the new one
// (Names), until the new cluster names its own.
type HistoryName struct {
	// Cluster is the id of the cluster whose history this names (0 for a
	// cluster bootstrapped before clusters had ids).
	Cluster uint64
	// Nonce is the random name; 0 means no name.
	Nonce uint64
}

// Names reports whether n names the history of cluster.
func (n HistoryName) Names(cluster uint64) bool { return n.Nonce != 0 && n.Cluster == cluster }

// errNoNonce is the error of a KindNameHistory command without a nonce,
// which names nothing; proposers never make one.
var errNoNonce = errors.New("metadata: history name: no nonce in the command")

// nameHistory is Apply of a KindNameHistory command: the metadata with
// the command's name when m has none for its cluster id (the first one
// applied wins), m itself otherwise. It makes no epoch, no history record
// and no event, and no guardrail checks it: it changes no schema.
func (m *ClusterMetadata) nameHistory(cmd Command, index uint64) (*ClusterMetadata, Effects, Outcome, error) {
	out := Outcome{Epoch: m.Epoch}
	switch {
	case cmd.Nonce == 0:
		return m, Effects{}, out, errNoNonce
	case m.History.Names(cmd.Cluster):
		return m, Effects{}, out, nil
	}
	next := *m
	next.History = HistoryName{Cluster: cmd.Cluster, Nonce: cmd.Nonce}
	next.Index = index
	return &next, Effects{}, out, nil
}

// historyNameVersion is the first byte of an encoded HistoryName.
const historyNameVersion = 1

// historyNameSize is the size of an encoded HistoryName: the version, the
// cluster id and the nonce, 8 bytes big endian each.
const historyNameSize = 1 + 8 + 8

// appendHistoryName appends the encoding of n (in the store's meta bucket
// and in snapshots, SectionHistoryName) to dst.
func appendHistoryName(dst []byte, n HistoryName) []byte {
	dst = append(dst, historyNameVersion)
	dst = binary.BigEndian.AppendUint64(dst, n.Cluster)
	return binary.BigEndian.AppendUint64(dst, n.Nonce)
}

// decodeHistoryName decodes appendHistoryName's bytes.
func decodeHistoryName(b []byte) (HistoryName, error) {
	if len(b) != historyNameSize || b[0] != historyNameVersion {
		return HistoryName{}, fmt.Errorf("history name: want %d bytes of version %d, got %d bytes", historyNameSize, historyNameVersion, len(b))
	}
	n := HistoryName{Cluster: binary.BigEndian.Uint64(b[1:]), Nonce: binary.BigEndian.Uint64(b[9:])}
	if n.Nonce == 0 {
		return HistoryName{}, errors.New("history name: nonce 0")
	}
	return n, nil
}
