package plan

import "testing"

// TestMaskChanges checks the planning of masks: a mask added, changed or
// removed on an existing column (a key column included) becomes ALTER
// TABLE ... ALTER c MASKED WITH ... or DROP MASKED, a new column carries
// its mask in ADD and a new table in CREATE TABLE, and the plan applied
// gives the desired masks.
func TestMaskChanges(t *testing.T) {
	from := mustLoad(t, ksHead+`CREATE TABLE ks.t (id int, c text MASKED WITH DEFAULT, v text MASKED WITH mask_inner(1, 1), w text, x text MASKED WITH mask_null(), PRIMARY KEY (id, c));`)
	to := mustLoad(t, ksHead+`CREATE TABLE ks.t (id int MASKED WITH mask_replace(-1), c text MASKED WITH DEFAULT, v text MASKED WITH mask_inner(2, 1), w text MASKED WITH mask_outer(1, 1, '#'), x text,
  y text static MASKED WITH mask_null(), z blob MASKED WITH mask_hash('SHA-512'), PRIMARY KEY (id, c));
CREATE TABLE ks.n (id int MASKED WITH DEFAULT PRIMARY KEY);`)
	p, err := Diff(from, to, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{
		"CREATE TABLE ks.n (\n    id int MASKED WITH system.mask_default() PRIMARY KEY\n)",
		"ALTER TABLE ks.t ADD (y text static MASKED WITH system.mask_null(), z blob MASKED WITH system.mask_hash('SHA-512'))",
		"ALTER TABLE ks.t ALTER id MASKED WITH system.mask_replace(-1)",
		"ALTER TABLE ks.t ALTER v MASKED WITH system.mask_inner(2, 1)",
		"ALTER TABLE ks.t ALTER w MASKED WITH system.mask_outer(1, 1, '#')",
		"ALTER TABLE ks.t ALTER x DROP MASKED",
	})
	for _, st := range p.Statements {
		if st.Destructive {
			t.Errorf("%s is destructive", st.CQL)
		}
	}
	got := applyPlan(t, from, p)
	again, err := Diff(got, to, Options{})
	if err != nil || len(again.Statements) != 0 {
		t.Errorf("after the plan: %v, %d statements left", err, len(again.Statements))
	}
}
