package api

import (
	"context"

	"github.com/metalog/metalog/access"
)

// visible is the filter of the keyspaces the caller of ctx may read, to hand
// to the member's reads: nil (everything, at no cost) when authentication
// is off or the caller holds reader unscoped; otherwise the keyspaces its
// reader grants cover, the others being invisible rather than forbidden.
func visible(ctx context.Context) func(keyspace string) bool {
	v, _ := visibleScope(ctx)
	return v
}

// visibleScope is visible(ctx) and, when it is not nil, a name of it: the
// caller's grants, the same for every caller who sees the same keyspaces
// (member.WatchQuery.Scope).
func visibleScope(ctx context.Context) (func(keyspace string) bool, string) {
	grants, ok := callerGrants(ctx)
	if !ok {
		return nil, ""
	}
	v := grants.Visible(access.Reader)
	if v == nil {
		return nil, ""
	}
	return v, grants.String()
}
