package api

import (
	"context"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
)

// Backend is what the handlers need of the member they serve; *member.Member
// implements it, and tests use a fake. Every method is safe for concurrent
// use and answers within ctx; errors map to gRPC codes with the table of
// package apierr (gRPC status errors keep theirs).
type Backend interface {
	// Execute parses, checks, proposes and applies one request.
	Execute(ctx context.Context, req member.Request) (metadata.Outcome, error)
	// DryRun checks one request as Execute would and returns its outcome
	// and the digest of the schema it would make, proposing nothing.
	DryRun(ctx context.Context, req member.Request) (metadata.Outcome, [32]byte, error)
	// Plan returns the DDL from the current schema to a desired one.
	Plan(ctx context.Context, req member.PlanRequest) (member.PlanResult, error)
	// View returns the immutable metadata a read answers from, at or past
	// minEpoch, with consistency "", "local" or "linearizable"; with a
	// visible predicate, its schema holds only the keyspaces it reports
	// true for (nil: every keyspace).
	View(ctx context.Context, minEpoch uint64, consistency string, visible func(keyspace string) bool) (*metadata.ClusterMetadata, error)
	// ViewAt returns the metadata of a read of the schema as it was at
	// epoch (waiting for the member to reach it), filtered as View's.
	ViewAt(ctx context.Context, epoch uint64, consistency string, visible func(keyspace string) bool) (*metadata.ClusterMetadata, error)
	// SetGuardrails commits a change of guardrail settings asked for by
	// principal and returns its epoch and the settings after it.
	SetGuardrails(ctx context.Context, principal, requestID string, set map[string]string) (uint64, guardrails.Settings, error)
	// Backup returns a backup of the state at a linearizable point and the
	// state it holds.
	Backup(ctx context.Context) ([]byte, *metadata.ClusterMetadata, error)
	// History returns a page of the history.
	History(ctx context.Context, q member.HistoryQuery) (member.HistoryPage, error)
	// RequestOutcome answers what became of a request id, after a
	// linearizable read.
	RequestOutcome(ctx context.Context, q member.RequestQuery) (member.RequestOutcome, error)
	// Watch runs a change feed, handing each message to send, until ctx
	// ends or send fails.
	Watch(ctx context.Context, q member.WatchQuery, send func(member.WatchMessage) error) error
	// ListMembers returns every member with its own status.
	ListMembers(ctx context.Context) (*member.ClusterStatus, error)
	// CheckCluster compares every member's schema digests.
	CheckCluster(ctx context.Context) (*member.ClusterCheck, error)
	// AddMember adds a learner under name with its peer address.
	AddMember(ctx context.Context, name, peerAddr string) (*member.MemberStatus, error)
	// RemoveMember removes the member with that name or hex id.
	RemoveMember(ctx context.Context, nameOrID string) error
	// RepairMember rebuilds the metadata of the member with that name or
	// hex id from its own log.
	RepairMember(ctx context.Context, nameOrID string) (*member.RepairResult, error)
	// Readiness says whether the member serves, for /readyz.
	Readiness() member.Readiness
}

var _ Backend = (*member.Member)(nil)
