package schema_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/schema"
)

// TestRemovedTablePropertiesInvalid checks that every statement that sets
// table properties refuses the ones Cassandra removed as ErrInvalid, with
// a reason that names the property and the release that removed it, and
// changes nothing; and that these names stay out of IsTableProperty (the
// guardrails' property lists take only properties a table can have).
func TestRemovedTablePropertiesInvalid(t *testing.T) {
	base := schemakit.Build(t, `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE ks.t (k int PRIMARY KEY, v int);
CREATE MATERIALIZED VIEW ks.v AS SELECT k, v FROM ks.t WHERE k IS NOT NULL AND v IS NOT NULL PRIMARY KEY (v, k)`)
	removed := map[string]string{
		"read_repair_chance":         "removed in Cassandra 4.0",
		"dclocal_read_repair_chance": "removed in Cassandra 4.0",
		"index_interval":             "removed in Cassandra 3.0",
		"replicate_on_write":         "removed in Cassandra 3.0",
		"populate_io_cache_on_flush": "removed in Cassandra 3.0",
	}
	statements := []string{
		"CREATE TABLE ks.n (k int PRIMARY KEY) WITH %s = 0",
		"CREATE TABLE ks.n (k int PRIMARY KEY) WITH comment = 'x' AND %s = 0",
		"ALTER TABLE ks.t WITH %s = 0",
		"CREATE TABLE ks.n LIKE ks.t WITH %s = 0",
		"CREATE MATERIALIZED VIEW ks.n AS SELECT k, v FROM ks.t WHERE k IS NOT NULL AND v IS NOT NULL PRIMARY KEY (v, k) WITH %s = 0",
		"ALTER MATERIALIZED VIEW ks.v WITH %s = 0",
	}
	for name, release := range removed {
		if !schema.IsRemovedTableProperty(name) || schema.IsTableProperty(name) {
			t.Errorf("%s: removed %v, a table property %v", name, schema.IsRemovedTableProperty(name), schema.IsTableProperty(name))
		}
		for _, form := range statements {
			text := strings.Replace(form, "%s", name, 1)
			s, _, _, err := schemakit.ApplyOne(t, base, text, schema.Env{Epoch: 100})
			if !errors.Is(err, schema.ErrInvalid) || !strings.Contains(err.Error(), "property "+name+" was "+release) {
				t.Errorf("%s: %v, want ErrInvalid saying the property was %s", text, err, release)
			}
			if s.Digest() != base.Digest() {
				t.Errorf("%s: the refusal changed the schema", text)
			}
		}
	}
	if schema.IsRemovedTableProperty("read_repair") || schema.IsRemovedTableProperty("comment") {
		t.Errorf("a current property is taken for a removed one")
	}
}
