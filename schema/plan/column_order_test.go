package plan

import (
	"testing"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// orderedTable is a desired file whose table, written in one CREATE
// TABLE, has static, regular, simple and complex columns in no
// particular order.
const orderedTable = ksHead + `CREATE TYPE ks.addr (street text);
CREATE TABLE ks.t (k int, c int, z text, b list<int>, s int static, a text, u addr, f frozen<addr>, PRIMARY KEY (k, c))
    WITH ID = 5a1c395e-b41f-11e5-9f22-ba0be0483c18 AND comment = 'x'`

// TestPlanReachesDescribeWhateverTheColumnOrder checks that applying the
// plan to a schema that reaches the desired table by another path (its
// columns created in another order, added by ALTER TABLE, some to drop)
// gives the desired file's DESCRIBE exactly, with no column-order
// normalization, and that planning again from there is empty.
func TestPlanReachesDescribeWhateverTheColumnOrder(t *testing.T) {
	want := mustLoad(t, orderedTable)
	head := ksHead + "CREATE TYPE ks.addr (street text);\n"
	paths := []struct {
		name, current string
		opt           Options
	}{
		{"nothing yet", "", Options{}},
		{"created with a part of the columns", head +
			`CREATE TABLE ks.t (k int, c int, a text, PRIMARY KEY (k, c)) WITH ID = 5a1c395e-b41f-11e5-9f22-ba0be0483c18 AND comment = 'x'`, Options{}},
		{"created in another order, grown by ALTER TABLE ADD", head +
			`CREATE TABLE ks.t (c int, z text, k int, PRIMARY KEY (k, c)) WITH ID = 5a1c395e-b41f-11e5-9f22-ba0be0483c18 AND comment = 'x';
ALTER TABLE ks.t ADD (f frozen<addr>, a text);
ALTER TABLE ks.t ADD u addr;
ALTER TABLE ks.t ADD (b list<int>, s int static)`, Options{}},
		{"with a column to drop and columns to add", head +
			`CREATE TABLE ks.t (k int, c int, x int, u addr, z text, PRIMARY KEY (k, c)) WITH ID = 5a1c395e-b41f-11e5-9f22-ba0be0483c18 AND comment = 'x'`,
			Options{DropColumns: true}},
	}
	for _, tt := range paths {
		t.Run(tt.name, func(t *testing.T) {
			var from schema.Schema
			if tt.current != "" {
				from = mustLoad(t, tt.current)
			}
			p, err := Diff(from, want, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			got := applyPlan(t, from, p)
			if g, w := describe.Schema(got), describe.Schema(want); g != w {
				t.Fatalf("after the plan:\n%s\nwant the desired file's DESCRIBE:\n%s\nplan:\n%s", g, w, planText(p))
			}
			checkConverged(t, got, want, tt.opt)
		})
	}
}
