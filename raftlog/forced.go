package raftlog

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A forcing (ForceNewCluster) turns one member's log into a new cluster
// of its own, under a new cluster id. The members of the cluster it was
// forced from still hold the old id in their data dirs; started again,
// they may even form a quorum of the old cluster among themselves while
// the forced member is down. The forced member remembers every forcing of
// its log (raft.db, meta/forced), refuses any traffic of an old cluster
// and tells the sender that its cluster was forced into a new one; the
// sender records that in its own raft.db (meta/forcedaway) and stops, and
// never starts again from that data dir (ForcedError). On the wire the
// answer is streamForced and the encoded Forcing on a log stream, and a
// FailedPrecondition status with an ErrorInfo (ForcedStatus) on gRPC.

// Forcing is one forcing of a log: member By rewrote its log of cluster
// From into cluster To, whose first entry after the rewrite is at Index.
type Forcing struct {
	// From is the id of the cluster the log belonged to.
	From uint64
	// To is the id of the new cluster (ForcedClusterID of the others).
	To uint64
	// Index is the log index of the last entry the forcing appended: the
	// new cluster's log goes on after it.
	Index uint64
	// By is the raft id of the member whose log was forced.
	By uint64
}

// forcingSize is the encoded size of a Forcing: four 8-byte big-endian
// numbers.
const forcingSize = 32

// Reasons of the ErrorInfo of a peer refusal (ForcedStatus,
// MismatchStatus), in ErrorInfoDomain.
const (
	// ReasonClusterForced: the caller's cluster was forced into a new one
	// by the member that answers; the metadata says how (ForcingOf).
	ReasonClusterForced = "CLUSTER_FORCED"
	// ReasonClusterMismatch: the member that answers belongs to another
	// cluster, named by the metadata key "cluster" (MismatchOf).
	ReasonClusterMismatch = "CLUSTER_MISMATCH"
	// ErrorInfoDomain is the domain of those ErrorInfo details.
	ErrorInfoDomain = "raftlog.metalog"
)

// ForcedClusterID is the id of the cluster that member by makes when it
// forces its log of cluster from at index: derived from the three, so that
// two members forced from one cluster, or one member forced twice, make
// different clusters, and the same forcing always makes the same id.
func ForcedClusterID(from, index, by uint64) uint64 {
	var b [8 * 3]byte
	binary.BigEndian.PutUint64(b[0:], from)
	binary.BigEndian.PutUint64(b[8:], index)
	binary.BigEndian.PutUint64(b[16:], by)
	sum := sha256.Sum256(append([]byte("metalog forced new cluster\n"), b[:]...))
	if id := binary.BigEndian.Uint64(sum[:8]); id != 0 {
		return id
	}
	return 1
}

// encode returns f in its 32-byte form.
func (f Forcing) encode() []byte {
	b := make([]byte, 0, forcingSize)
	for _, v := range []uint64{f.From, f.To, f.Index, f.By} {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	return b
}

// decodeForcing reads the 32-byte form of a Forcing.
func decodeForcing(b []byte) (Forcing, bool) {
	if len(b) != forcingSize {
		return Forcing{}, false
	}
	return Forcing{
		From:  binary.BigEndian.Uint64(b[0:]),
		To:    binary.BigEndian.Uint64(b[8:]),
		Index: binary.BigEndian.Uint64(b[16:]),
		By:    binary.BigEndian.Uint64(b[24:]),
	}, true
}

// ErrClusterForced is matched (errors.Is) by a ForcedError.
var ErrClusterForced = errors.New("raftlog: this member's cluster was forced into a new one")

// ErrForceIncomplete is returned by Start for a log whose forcing
// (ForceNewCluster) was interrupted after it recorded the new cluster id
// and before it wrote the entries that remove the other members.
var ErrForceIncomplete = errors.New("raftlog: a --force-new-cluster of this data dir was interrupted")

// ForcedError is the Err of a node that a member of a newer cluster told
// that the node's cluster was forced into that newer one, and the error of
// Start for a data dir that was told so: the old cluster must not go on
// beside the new one, so its members stop for good.
type ForcedError struct {
	Forcing Forcing
	// ByName is the forcing member's name, when the caller knows it ("" to
	// show its id only).
	ByName string
	// Dir is this member's data dir ("" when not known).
	Dir string
}

// Error says what happened and what to do.
func (e *ForcedError) Error() string {
	by := FormatID(e.Forcing.By)
	if e.ByName != "" {
		by = e.ByName + " (id " + by + ")"
	}
	dir := "this data dir"
	if e.Dir != "" {
		dir = "data dir " + e.Dir
	}
	return fmt.Sprintf("%v: cluster %s was forced into the new cluster %s by member %s at index %d (--force-new-cluster); "+
		"%s belongs to the old cluster and must not be started again: delete it, and to bring this member back, "+
		"`metalog cluster add` it to the new cluster and start it with --join on an empty data dir",
		ErrClusterForced, FormatID(e.Forcing.From), FormatID(e.Forcing.To), by, e.Forcing.Index, dir)
}

// Is reports whether target is ErrClusterForced.
func (e *ForcedError) Is(target error) bool { return target == ErrClusterForced }

// ForcedStatus is the gRPC answer of a forced member to a peer call of a
// member of a cluster it was forced from: FailedPrecondition, msg, and an
// ErrorInfo (ReasonClusterForced) that ForcingOf reads back.
func ForcedStatus(f Forcing, msg string) error {
	st, err := status.New(codes.FailedPrecondition, msg).WithDetails(&errdetails.ErrorInfo{
		Reason: ReasonClusterForced, Domain: ErrorInfoDomain,
		Metadata: map[string]string{
			"from": FormatID(f.From), "to": FormatID(f.To),
			"index": strconv.FormatUint(f.Index, 10), "by": FormatID(f.By),
		},
	})
	if err != nil {
		return status.Error(codes.FailedPrecondition, msg)
	}
	return st.Err()
}

// ForcingOf returns the Forcing of a ForcedStatus error; ok is false for
// any other error.
func ForcingOf(err error) (f Forcing, ok bool) {
	md, ok := errorInfo(err, ReasonClusterForced)
	if !ok {
		return Forcing{}, false
	}
	var errs [4]error
	f.From, errs[0] = strconv.ParseUint(md["from"], 16, 64)
	f.To, errs[1] = strconv.ParseUint(md["to"], 16, 64)
	f.Index, errs[2] = strconv.ParseUint(md["index"], 10, 64)
	f.By, errs[3] = strconv.ParseUint(md["by"], 16, 64)
	if errors.Join(errs[:]...) != nil {
		return Forcing{}, false
	}
	return f, true
}

// MismatchStatus is the gRPC answer to a peer call of a member of another
// cluster (not one this member was forced from): FailedPrecondition, msg,
// and an ErrorInfo (ReasonClusterMismatch) naming this member's cluster,
// which MismatchOf reads back.
func MismatchStatus(local uint64, msg string) error {
	st, err := status.New(codes.FailedPrecondition, msg).WithDetails(&errdetails.ErrorInfo{
		Reason: ReasonClusterMismatch, Domain: ErrorInfoDomain,
		Metadata: map[string]string{"cluster": FormatID(local)},
	})
	if err != nil {
		return status.Error(codes.FailedPrecondition, msg)
	}
	return st.Err()
}

// MismatchOf returns the cluster id a MismatchStatus error names; ok is
// false for any other error.
func MismatchOf(err error) (cluster uint64, ok bool) {
	md, ok := errorInfo(err, ReasonClusterMismatch)
	if !ok {
		return 0, false
	}
	cluster, perr := strconv.ParseUint(md["cluster"], 16, 64)
	return cluster, perr == nil
}

// errorInfo returns the metadata of err's ErrorInfo detail of reason in
// ErrorInfoDomain.
func errorInfo(err error, reason string) (map[string]string, bool) {
	st, ok := status.FromError(err)
	if !ok || err == nil {
		return nil, false
	}
	for _, d := range st.Details() {
		if ei, isInfo := d.(*errdetails.ErrorInfo); isInfo && ei.GetReason() == reason && ei.GetDomain() == ErrorInfoDomain {
			return ei.GetMetadata(), true
		}
	}
	return nil, false
}

// lineage is a node's cluster identity: its cluster id and the forcings
// that made it (oldest first), which Start reads from raft.db. Node embeds
// it; it never changes while the node runs.
type lineage struct {
	id       uint64
	forcings []Forcing
	naming   HistoryNaming
}

// HistoryNaming is what the node's log records about naming its
// cluster's history (Config.Naming at its creation, NamingBegun once
// forced).
func (l *lineage) HistoryNaming() HistoryNaming { return l.naming }

// ClusterID is the id of the cluster the node's log belongs to (see
// Config.ClusterID), 0 for a log written before ids were recorded; such a
// node checks no peer's id (LocalNode).
func (l *lineage) ClusterID() uint64 { return l.id }

// ForcedFrom reports whether cluster is one this node's log was forced
// from (by this member, at any forcing of its log), and that forcing: a
// member of that cluster is told it was forced into a new one and stops,
// and this node goes on (Transport checks for it at run time, see
// forcedFromer).
func (l *lineage) ForcedFrom(cluster uint64) (Forcing, bool) {
	if cluster == 0 {
		return Forcing{}, false
	}
	for _, f := range l.forcings {
		if f.From == cluster {
			return f, true
		}
	}
	return Forcing{}, false
}

// Forcings returns the forcings of the node's log, oldest first; the
// slice is the caller's.
func (l *lineage) Forcings() []Forcing { return append([]Forcing(nil), l.forcings...) }

// forcedFromer is the optional side of a LocalNode that knows the
// clusters its log was forced from (Node does, through lineage).
type forcedFromer interface {
	ForcedFrom(cluster uint64) (Forcing, bool)
}
