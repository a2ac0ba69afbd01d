package guardrails_test

import (
	"errors"
	"fmt"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema"
)

func Example() {
	g, err := guardrails.Defaults().Set("tables_fail_threshold", "1")
	if err == nil {
		g, err = g.Set("tables_warn_threshold", "-1")
	}
	if err == nil {
		err = g.Validate()
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	var s schema.Schema
	s, _, _, _ = schema.Apply(s, &schema.CreateKeyspace{Name: "shop",
		Replication: schema.Replication{Class: "SimpleStrategy", Options: map[string]string{"replication_factor": "1"}}}, schema.Env{Epoch: 1})
	for i, name := range []string{"orders", "items"} {
		var st schema.Statement = &schema.CreateTable{Keyspace: "shop", Name: name,
			Columns: []schema.ColumnDef{{Name: "id", Type: schema.TypeInt, PrimaryKey: true}}}
		st, warnings := guardrails.Prepare(g, st)
		after, _, res, err := schema.Apply(s, st, schema.Env{Epoch: uint64(i + 2)})
		if err != nil {
			fmt.Println(err)
			return
		}
		more, err := guardrails.Check(g, guardrails.Input{Statement: st, Result: res, Before: s, After: after, MaxMutationSize: 16 << 20})
		warnings = append(warnings, more...)
		if errors.Is(err, guardrails.ErrFailed) {
			fmt.Println(err)
			continue
		}
		s = after
		fmt.Println("created", name, "warnings:", len(warnings))
	}
	// Output:
	// created orders warnings: 0
	// Guardrail tables_fail_threshold violated: Cannot have more than 1 tables, aborting the creation of table shop.items
}
