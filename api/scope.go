package api

import (
	"context"

	"google.golang.org/grpc/codes"

	"github.com/metalog/metalog/access"
)

// scopeRefused returns the PermissionDenied status of msg with the
// ErrorInfo detail of reasonScope; meta says what was refused (the
// keyspace, or the method).
func scopeRefused(msg string, meta map[string]string) error {
	return withInfo(codes.PermissionDenied, msg, reasonScope, meta)
}

// scopeGrants returns the grants the member checks a request's statements
// against: nil when authentication is off (no check), else the caller's.
func scopeGrants(ctx context.Context) access.Grants {
	grants, ok := callerGrants(ctx)
	if !ok {
		return nil
	}
	if grants == nil {
		return access.Grants{} // an identity without grants: covers nothing
	}
	return grants
}

// checkMethodScope refuses a caller holding need only for scopes that do
// not cover what method (with req, nil for a stream) needs it for
// (methodScope): a scoped operator calling AddMember, say.
func checkMethodScope(method string, req any, need Role, id identity) error {
	scope, why, ok := methodScope(method, req)
	if !ok {
		return nil
	}
	for _, g := range id.grants {
		if g.Role == need && scope.Within(g.Scope) {
			return nil
		}
	}
	where := "for every keyspace"
	if scope != access.All {
		where = "on keyspace " + string(scope)
	}
	return scopeRefused(shortMethod(method)+" needs role "+string(need)+" "+where+" ("+why+"); "+id.name+" holds "+id.grants.String(),
		map[string]string{"method": shortMethod(method)})
}
