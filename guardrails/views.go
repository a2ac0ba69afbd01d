package guardrails

import "github.com/metalog/metalog/schema"

// The guardrails of materialized views: materialized_views_enabled
// (false by default, as Cassandra 4.0 and later ship with views disabled)
// and materialized_views_per_table_*. Views are not tables for
// tables_*: Cassandra counts its tables without their views.

// viewsLimit is materialized_views_per_table_*, in Cassandra's words.
var viewsLimit = limit{
	warn: "materialized_views_per_table_warn_threshold", fail: "materialized_views_per_table_fail_threshold",
	warnMsg: func(what string, v, t int64) string {
		return "Creating materialized view " + what + ", current number of views " + itoa(v) + " exceeds warning threshold of " + itoa(t) + "."
	},
	failMsg: func(what string, v, t int64) string {
		return "Tables cannot have more than " + itoa(t) + " materialized views, aborting the creation of materialized view " + what
	},
}

// ViewsDisabledMessage is the reason materialized_views_enabled gives for
// refusing CREATE MATERIALIZED VIEW ks.view, which names the setting and
// how to turn it on.
func ViewsDisabledMessage(object string) string {
	return "Materialized views are disabled (materialized_views_enabled is false, the default, as Cassandra 4.0 and later ship with them disabled): " +
		"CREATE MATERIALIZED VIEW " + object + " is not allowed. To allow them, run `metalog guardrails set materialized_views_enabled=true`, " +
		"or set materialized_views_enabled: true under guardrails: in the config file of a new cluster"
}

// createView checks CREATE MATERIALIZED VIEW against
// materialized_views_enabled, the table properties it sets and the number
// of views of its base table, as Cassandra's CreateViewStatement does
// (the tables guardrail does not count views, nor does Cassandra's).
func (c *checker) createView(st *schema.CreateView) error {
	s := &c.s
	if !s.MaterializedViewsEnabled {
		return fail("materialized_views_enabled", ViewsDisabledMessage(c.object()))
	}
	v, ok := c.table()
	if !ok || v.View() == nil {
		return nil
	}
	if err := c.properties(st.Options, v); err != nil {
		return err
	}
	if s.MaterializedViewsPerTableWarnThreshold == Disabled && s.MaterializedViewsPerTableFailThreshold == Disabled {
		return nil
	}
	k, _ := c.in.After.Keyspace(v.Keyspace)
	n := int64(len(k.Views(v.View().Base)))
	return c.max(&viewsLimit, s.MaterializedViewsPerTableWarnThreshold, s.MaterializedViewsPerTableFailThreshold, n, v.Name, " on table ", v.View().Base)
}
