package member

import (
	"errors"
	"fmt"
	"slices"

	"github.com/metalog/metalog/access"
	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// ErrOutOfScope is matched (errors.Is) by the error of a request with a
// statement that touches a keyspace the caller's ddl grants do not cover
// (a ScopeError). Nothing of such a request was checked or proposed.
var ErrOutOfScope = errors.New("member: keyspace outside the caller's scope")

// ScopeError is a statement a scoped ddl role may not execute: it touches
// Keyspace, which none of the caller's ddl grants covers.
type ScopeError struct {
	// Statement is the statement's kind and Object what it is about, as
	// schema errors name them.
	Statement, Object string
	// Keyspace is the first keyspace the statement touches outside the
	// scope.
	Keyspace string
	// Principal is the caller, Grants what it holds.
	Principal string
	Grants    access.Grants
}

// Error returns e.g. "CREATE TABLE other.t: token:ci holds ddl@shop, not
// ddl on keyspace other; nothing of this request was applied".
func (e *ScopeError) Error() string {
	return fmt.Sprintf("%s %s: %s holds %s, not %s on keyspace %s; nothing of this request was applied",
		e.Statement, clip.String(e.Object), e.Principal, e.Grants, access.DDL, clip.String(e.Keyspace))
}

// Is matches ErrOutOfScope.
func (e *ScopeError) Is(target error) bool { return target == ErrOutOfScope }

// checkScope checks that grants cover every keyspace the statements touch
// (schema.Keyspaces, the unqualified ones in defaultKeyspace), and returns
// the grants the request uses, comma separated, for the command's Role:
// empty when grants is nil (authentication off) or holds ddl unscoped,
// which skip the check. The first statement outside the scope refuses the
// whole request (a *metadata.StatementError wrapping a *ScopeError); a
// statement that names no keyspace, with no default, gets the error Apply
// would give it (schema.NoKeyspace), as a scope cannot cover it. It costs
// O(statements) and never looks at the schema.
func checkScope(parsed []cql.Parsed, defaultKeyspace, principal string, grants access.Grants) (string, error) {
	if grants == nil || grants.Unscoped(access.DDL) {
		return "", nil
	}
	var used access.Grants
	for i, p := range parsed {
		for _, ks := range schema.Keyspaces(p.Statement, defaultKeyspace) {
			refuse := func(err error) (string, error) {
				return "", &metadata.StatementError{Position: i + 1, Total: len(parsed), Err: err}
			}
			if ks == "" {
				return refuse(schema.NoKeyspace(p.Statement))
			}
			g, ok := grants.For(access.DDL, ks)
			if !ok {
				return refuse(&ScopeError{Statement: p.Statement.Kind(), Object: p.Statement.Object(), Keyspace: ks, Principal: principal, Grants: grants})
			}
			if !slices.Contains(used, g) {
				used = append(used, g)
			}
		}
	}
	if len(used) == 0 {
		return "", nil
	}
	return used.String(), nil
}
