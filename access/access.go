// Package access says what a client identity may do: roles, each held for
// every keyspace or for a scope of keyspaces (one keyspace, or the
// keyspaces whose names start with a prefix).
//
// A grant is written ROLE or ROLE@SCOPE: "ddl" holds ddl everywhere,
// "ddl@shop" only in the keyspace shop, "ddl@tenant_*" in every keyspace
// whose name starts with "tenant_". Keyspace names are matched as the
// schema stores them (CQL folds unquoted names to lower case), so a scope
// is case-sensitive.
//
// The package is pure: the api authenticates callers and attaches their
// Grants; the member checks what a request touches against them. It also
// holds the one rule for the names members and token holders go by
// (CheckName), which both the member and the api check.
package access

import (
	"fmt"
	"slices"
	"strings"
)

// Role is a right a client identity holds. None implies another.
type Role string

// The roles.
const (
	// Reader may read: schema, members, guardrails, cluster check, server
	// reflection.
	Reader Role = "reader"
	// DDL may execute schema changes.
	DDL Role = "ddl"
	// Operator may change guardrails and membership and repair members.
	Operator Role = "operator"
)

// Roles lists the roles, for messages.
const Roles = "reader, ddl or operator"

// Scope is the set of keyspaces a grant covers: "" for every keyspace, a
// keyspace name, or a prefix followed by "*".
type Scope string

// All is the scope of an unscoped grant.
const All Scope = ""

// Match reports whether the scope covers keyspace.
func (s Scope) Match(keyspace string) bool {
	if s == All {
		return true
	}
	if prefix, ok := strings.CutSuffix(string(s), "*"); ok {
		return strings.HasPrefix(keyspace, prefix)
	}
	return string(s) == keyspace
}

// Within reports whether every keyspace s covers is covered by outer.
func (s Scope) Within(outer Scope) bool {
	if outer == All {
		return true
	}
	if s == All {
		return false
	}
	if prefix, ok := strings.CutSuffix(string(s), "*"); ok {
		op, ook := strings.CutSuffix(string(outer), "*")
		return ook && strings.HasPrefix(prefix, op)
	}
	return outer.Match(string(s))
}

// ParseScope checks a scope as written after the '@' of a grant (or given
// to a keyspace-scoped setting): a keyspace name of letters, digits and
// underscores, optionally ending in '*'.
func ParseScope(s string) (Scope, error) {
	name, _ := strings.CutSuffix(s, "*")
	if name == "" {
		return "", fmt.Errorf("scope %q: want a keyspace name or a prefix followed by '*' (an unscoped role covers every keyspace)", s)
	}
	for i, r := range name {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "", fmt.Errorf("scope %q: character %q at %d: a keyspace name has only letters, digits and underscores", s, r, i+1)
		}
	}
	return Scope(s), nil
}

// Grant is one role over one scope.
type Grant struct {
	Role  Role
	Scope Scope
}

// String writes g as it is parsed: "ddl" or "ddl@shop".
func (g Grant) String() string {
	if g.Scope == All {
		return string(g.Role)
	}
	return string(g.Role) + "@" + string(g.Scope)
}

// ParseGrant parses "ROLE" or "ROLE@SCOPE".
func ParseGrant(s string) (Grant, error) {
	s = strings.TrimSpace(s)
	name, scope, scoped := strings.Cut(s, "@")
	r := Role(name)
	switch r {
	case Reader, DDL, Operator:
	default:
		return Grant{}, fmt.Errorf("unknown role %q (want %s, optionally @keyspace or @prefix*)", name, Roles)
	}
	if !scoped {
		return Grant{Role: r}, nil
	}
	sc, err := ParseScope(scope)
	if err != nil {
		return Grant{}, fmt.Errorf("role %q: %w", s, err)
	}
	return Grant{Role: r, Scope: sc}, nil
}

// Grants is what one identity holds.
type Grants []Grant

// ParseGrants parses a list of grants (the comma-separated items of a
// token file line or of auth_cert_roles).
func ParseGrants(items []string) (Grants, error) {
	out := make(Grants, 0, len(items))
	for _, it := range items {
		g, err := ParseGrant(it)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out, nil
}

// String lists the grants, comma separated ("no role" for none).
func (gs Grants) String() string {
	if len(gs) == 0 {
		return "no role"
	}
	s := make([]string, len(gs))
	for i, g := range gs {
		s[i] = g.String()
	}
	return strings.Join(s, ",")
}

// Held says what gs holds as a refusal says it: "no role", or "roles "
// and the list ("roles reader,ddl@shop").
func (gs Grants) Held() string {
	if len(gs) == 0 {
		return "no role"
	}
	return "roles " + gs.String()
}

// Has reports whether gs holds r for at least one scope: enough to call a
// method that needs r, whose answer is then limited to the scopes.
func (gs Grants) Has(r Role) bool {
	return slices.ContainsFunc(gs, func(g Grant) bool { return g.Role == r })
}

// Unscoped reports whether gs holds r for every keyspace.
func (gs Grants) Unscoped(r Role) bool {
	return slices.Contains(gs, Grant{Role: r})
}

// For returns the grant of r that covers keyspace, preferring an unscoped
// one, then an exact keyspace, then the longest prefix: the grant a change
// is recorded as using.
func (gs Grants) For(r Role, keyspace string) (Grant, bool) {
	best, found := Grant{}, false
	for _, g := range gs {
		if g.Role != r || !g.Scope.Match(keyspace) {
			continue
		}
		if !found || rank(g.Scope) > rank(best.Scope) {
			best, found = g, true
		}
	}
	return best, found
}

// rank orders the scopes that match one keyspace: unscoped first, then the
// exact name, then longer prefixes before shorter ones.
func rank(s Scope) int {
	switch {
	case s == All:
		return 1 << 30
	case !strings.HasSuffix(string(s), "*"):
		return 1 << 29
	default:
		return len(s)
	}
}

// Allows reports whether gs holds r for keyspace.
func (gs Grants) Allows(r Role, keyspace string) bool {
	_, ok := gs.For(r, keyspace)
	return ok
}

// Visible returns the filter of the keyspaces r covers, or nil when gs
// holds r unscoped (every keyspace: no filter to apply).
func (gs Grants) Visible(r Role) func(keyspace string) bool {
	if gs.Unscoped(r) {
		return nil
	}
	return func(keyspace string) bool { return gs.Allows(r, keyspace) }
}
