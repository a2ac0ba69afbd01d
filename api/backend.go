package api

import (
	"context"
	"errors"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
)

// The handlers reach the member through narrow interfaces, one per
// service of the member (member.Writes, member.Reads, member.Cluster) and
// one for its readiness: each handler uses only its slice, and tests fake
// only what they exercise. Every method is safe for concurrent use and
// answers within ctx; errors map to gRPC codes with the table of package
// apierr (gRPC status errors keep theirs).

// Writer is the write slice of the member, what Execute (with dry_run),
// Plan and SetGuardrails use; *member.Writes implements it. A Writer that
// also implements KeyspaceGuardrailsSetter serves SetGuardrails with a
// keyspace.
type Writer interface {
	// Execute parses, checks, proposes and applies one request.
	Execute(ctx context.Context, req member.Request) (metadata.Outcome, error)
	// DryRun checks one request as Execute would and returns its outcome
	// and the digest of the schema it would make, proposing nothing.
	DryRun(ctx context.Context, req member.Request) (metadata.Outcome, [32]byte, error)
	// Plan returns the DDL from the current schema to a desired one.
	Plan(ctx context.Context, req member.PlanRequest) (member.PlanResult, error)
	// SetGuardrails commits a change of guardrail settings asked for by
	// principal and returns its epoch and the settings after it.
	SetGuardrails(ctx context.Context, principal, requestID string, set map[string]string) (uint64, guardrails.Settings, error)
}

// Reader is the read slice of the member, what the schema and guardrail
// reads, History, Watch, GetRequestOutcome and Backup use; *member.Reads
// implements it.
type Reader interface {
	// Read returns the immutable metadata a read answers from, at or past
	// minEpoch, with consistency "", "local" or "linearizable"; with a
	// visible predicate, its schema holds only the keyspaces it reports
	// true for (nil: every keyspace).
	Read(ctx context.Context, minEpoch uint64, consistency string, visible func(keyspace string) bool) (*metadata.ClusterMetadata, error)
	// ReadAt returns the metadata of a read of the schema as it was at
	// epoch, filtered as Read's.
	ReadAt(ctx context.Context, epoch uint64, consistency string, visible func(keyspace string) bool) (*metadata.ClusterMetadata, error)
	// History returns a page of the history.
	History(ctx context.Context, q member.HistoryQuery) (member.HistoryPage, error)
	// Watch runs a change feed, handing each message to send, until ctx
	// ends or send fails.
	Watch(ctx context.Context, q member.WatchQuery, send func(member.WatchMessage) error) error
	// RequestOutcome answers what became of a request id, after a
	// linearizable read.
	RequestOutcome(ctx context.Context, q member.RequestQuery) (member.RequestOutcome, error)
	// Backup returns a backup of the state at a linearizable point and the
	// state it holds.
	Backup(ctx context.Context) ([]byte, *metadata.ClusterMetadata, error)
}

// ClusterAdmin is the membership slice of the member, what the cluster
// handlers use; *member.Cluster implements it.
type ClusterAdmin interface {
	// ListMembers returns every member with its own status.
	ListMembers(ctx context.Context) (*member.ClusterStatus, error)
	// CheckCluster compares every member's schema digests.
	CheckCluster(ctx context.Context) (*member.ClusterCheck, error)
	// AddMember adds a learner under name with its peer address.
	AddMember(ctx context.Context, name, peerAddr string, observer bool) (*member.MemberStatus, error)
	// RemoveMember removes the member with that name or hex id.
	RemoveMember(ctx context.Context, nameOrID string) error
	// RepairMember rebuilds the metadata of the member with that name or
	// hex id from its own log.
	RepairMember(ctx context.Context, nameOrID string) (*member.RepairResult, error)
}

// Readier says whether the member serves, for /readyz; *member.Member
// implements it.
type Readier interface {
	// Readiness says whether the member is ready, and why not.
	Readiness() member.Readiness
}

// Identifier gives the member's cluster and history ids, which every
// response carries (identity.go); *member.Member implements it.
type Identifier interface {
	// Identity is the member's cluster id and history id as of now.
	Identity() member.Identity
}

// Backend is the member the handlers serve, as the slices they use.
// Writer, Reader, Cluster and Readiness are required; MemberBackend gives
// a running member's.
type Backend struct {
	// Writer serves Execute, Plan and SetGuardrails.
	Writer Writer
	// Reader serves the reads, History, Watch, GetRequestOutcome and
	// Backup.
	Reader Reader
	// Cluster serves the membership calls.
	Cluster ClusterAdmin
	// Readiness answers /readyz.
	Readiness Readier
	// Identity, when not nil, stamps every response with the member's
	// cluster and history ids; nil leaves the two fields unset.
	Identity Identifier
}

// MemberBackend returns the Backend of m: its three services, and m
// itself for its readiness and identity.
func MemberBackend(m *member.Member) Backend {
	return Backend{Writer: m.Writes(), Reader: m.Reads(), Cluster: m.Cluster(), Readiness: m, Identity: m}
}

// The member's services are the slices the handlers use.
var (
	_ Writer                   = (*member.Writes)(nil)
	_ KeyspaceGuardrailsSetter = (*member.Writes)(nil)
	_ Reader                   = (*member.Reads)(nil)
	_ ClusterAdmin             = (*member.Cluster)(nil)
	_ Readier                  = (*member.Member)(nil)
	_ Identifier               = (*member.Member)(nil)
)

// validate refuses a Backend without one of its required slices, naming
// it.
func (b Backend) validate() error {
	switch {
	case b.Writer == nil && b.Reader == nil && b.Cluster == nil && b.Readiness == nil:
		return errors.New("api: no member to serve")
	case b.Writer == nil:
		return errors.New("api: no member to serve: Backend.Writer is nil")
	case b.Reader == nil:
		return errors.New("api: no member to serve: Backend.Reader is nil")
	case b.Cluster == nil:
		return errors.New("api: no member to serve: Backend.Cluster is nil")
	case b.Readiness == nil:
		return errors.New("api: no member to serve: Backend.Readiness is nil")
	}
	return nil
}
