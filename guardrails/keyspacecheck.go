package guardrails

import (
	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/schema"
)

// The checks of per-keyspace overrides: Check takes the per-object
// thresholds from the override that applies to the changed keyspace (see
// Overrides.Effective) and, for CREATE TABLE, bounds the keyspace's own
// number of tables by the override's tables_* besides the cluster's total.
// A message of a threshold from an override ends with its scope.

// scopeOf returns the scope suffix of a message of the guardrail called
// name when its threshold comes from the override that applies: "
// (keyspace shop: columns_per_table_fail_threshold=10)", and for a
// pattern " (keyspace tenant_a, override tenant_*: ...)". The tables_*
// of the cluster's total have none (keyspaceTables words its own).
func (c *checker) scopeOf(name string) string {
	if !c.scoped || name == tablesLimit.warn || name == tablesLimit.fail {
		return ""
	}
	v, ok := c.ks.Get(name)
	if !ok {
		return ""
	}
	return scopeSuffix(c.ks.Scope, c.in.Result.Keyspace, name, v)
}

// scopeSuffix words where a threshold of an override comes from.
func scopeSuffix(scope, ks, name string, v int64) string {
	where := "keyspace " + clip.String(ks)
	if scope != ks {
		where += ", override " + scope
	}
	return " (" + where + ": " + name + "=" + itoa(v) + ")"
}

// scopeFailure sets the scope of a failure of the guardrail called name
// whose threshold comes from the override that applies.
func (c *checker) scopeFailure(err error, name string) error {
	if f, ok := err.(*Failure); ok && c.scopeOf(name) != "" {
		f.Scope = c.ks.Scope
	}
	return err
}

// keyspaceTables checks the number of tables of t's keyspace (views left
// out, in O(1): schema.Keyspace.TableCount) against the override's
// tables_* thresholds, in Cassandra's words for tables_* with the scope
// after them.
func (c *checker) keyspaceTables(t *schema.Table) error {
	if !c.scoped {
		return nil
	}
	warnAt, hasWarn := c.ks.get(ovTablesWarn)
	failAt, hasFail := c.ks.get(ovTablesFail)
	if !hasWarn && !hasFail {
		return nil
	}
	k, ok := c.in.After.Keyspace(t.Keyspace)
	if !ok {
		return nil
	}
	n := int64(k.TableCount())
	if hasFail && failAt != Disabled && n > failAt {
		return &Failure{Guardrail: tablesLimit.fail, Scope: c.ks.Scope,
			Message: decorate(tablesLimit.fail, tablesLimit.failMsg(join([]string{t.Keyspace, ".", t.Name}), n, failAt)+
				scopeSuffix(c.ks.Scope, t.Keyspace, tablesLimit.fail, failAt))}
	}
	if hasWarn && warnAt != Disabled && n > warnAt && c.warns() {
		c.warn(tablesLimit.warn, tablesLimit.warnMsg(join([]string{t.Keyspace, ".", t.Name}), n, warnAt)+
			scopeSuffix(c.ks.Scope, t.Keyspace, tablesLimit.warn, warnAt))
	}
	return nil
}
