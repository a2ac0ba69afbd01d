package schema_test

import (
	"errors"
	"fmt"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

func ExampleApply() {
	var s schema.Schema
	s, _, _, _ = schema.Apply(s, &schema.CreateKeyspace{
		Name:          "shop",
		Replication:   schema.Replication{Class: "SimpleStrategy", Options: map[string]string{"replication_factor": "1"}},
		DurableWrites: true,
	}, schema.Env{Epoch: 1})
	create := &schema.CreateTable{Keyspace: "shop", Name: "orders", Columns: []schema.ColumnDef{
		{Name: "id", Type: schema.TypeInt, PrimaryKey: true},
		{Name: "v", Type: schema.TypeText},
	}}
	s, diff, res, err := schema.Apply(s, create, schema.Env{Epoch: 2})
	fmt.Println(res.Applied, err, diff.Changes[0].Op, len(schema.AppendTable(nil, diff.Changes[0].TableValue)))
	_, _, _, err = schema.Apply(s, create, schema.Env{Epoch: 3})
	fmt.Println(err, errors.Is(err, schema.ErrAlreadyExists))
	t, _ := s.Table("shop", "orders")
	fmt.Print(describe.Table(t))
	// Output:
	// true <nil> PutTable 45
	// CREATE TABLE shop.orders: table already exists true
	// CREATE TABLE shop.orders (
	//     id int PRIMARY KEY,
	//     v text
	// ) WITH ID = 00000000-0000-8000-826d-6c6700000000;
}
