package schema

import "testing"

// functionScaleSchema is schemaWithTables(n) with a function and an
// aggregate over it in ks, for the drop statements.
func functionScaleSchema(t testing.TB, n int) Schema {
	return mustApply(t, schemaWithTables(t, n),
		&CreateFunction{Keyspace: "ks", Name: "sf", Args: []FunctionArg{{Name: "s", Type: TypeInt}, {Name: "a", Type: TypeInt}}, ReturnType: TypeInt, CalledOnNullInput: true, Language: "java", Body: "return s;"},
		&CreateFunction{Keyspace: "ks", Name: "gone", Args: []FunctionArg{{Name: "a", Type: TypeText}}, ReturnType: TypeInt, CalledOnNullInput: true, Language: "java", Body: "return 1;"},
		&CreateAggregate{Keyspace: "ks", Name: "agg", ArgTypes: []Type{TypeInt}, StateFunc: "sf", StateType: TypeInt, InitCond: "0"})
}

// TestFunctionsDoNotWalkTables checks that creating and dropping a
// function and an aggregate allocate the same with 1,000 tables as with
// 8,000 (within the 1.2x of TestApplyDoesNotWalkTables), so none of them
// walks the tables.
func TestFunctionsDoNotWalkTables(t *testing.T) {
	const n = 1000
	small, large := functionScaleSchema(t, n), functionScaleSchema(t, 8*n)
	for _, tt := range []struct {
		name string
		st   Statement
	}{
		{"CreateFunction", &CreateFunction{Keyspace: "ks", Name: "nf", Args: []FunctionArg{{Name: "a", Type: TypeInt}}, ReturnType: TypeInt, CalledOnNullInput: true, Language: "java", Body: "return a;"}},
		{"CreateAggregate", &CreateAggregate{Keyspace: "ks", Name: "nagg", ArgTypes: []Type{TypeInt}, StateFunc: "sf", StateType: TypeInt, InitCond: "1"}},
		{"DropFunction", &DropFunction{Keyspace: "ks", Name: "gone"}},
		{"DropAggregate", &DropAggregate{Keyspace: "ks", Name: "agg", ArgTypes: []Type{TypeInt}, ArgsGiven: true}},
	} {
		allocs := func(s Schema) float64 {
			return testing.AllocsPerRun(100, func() {
				if _, _, _, err := Apply(s, tt.st, Env{Epoch: 1}); err != nil {
					t.Fatal(err)
				}
			})
		}
		a, b := allocs(small), allocs(large)
		t.Logf("%s: %v allocations with %d tables, %v with %d", tt.name, a, n, b, 8*n)
		if b > 1.2*a {
			t.Errorf("%s allocates %v with %d tables vs %v with %d", tt.name, b, 8*n, a, n)
		}
	}
}
