package plan_test

import (
	"fmt"

	"github.com/metalog/metalog/schema/plan"
)

// Example plans the example of docs/planner.md.
func Example() {
	current, err := plan.Load(`
CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3};
CREATE TYPE shop.address (street text, city text);
CREATE TABLE shop.orders (
    id uuid PRIMARY KEY,
    customer text,
    note text,
    ship_to frozen<address>
) WITH comment = 'orders' AND gc_grace_seconds = 3600;
CREATE INDEX orders_by_customer ON shop.orders (customer);`)
	if err != nil {
		fmt.Println(err)
		return
	}
	desired, err := plan.Load(`
CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3};
CREATE TYPE shop.address (street text, city text, zip text);
CREATE TABLE shop.orders (
    id uuid PRIMARY KEY,
    customer text,
    ship_to frozen<address>,
    total decimal
) WITH comment = 'orders by id';
CREATE CUSTOM INDEX orders_by_customer ON shop.orders (customer) USING 'sai';
CREATE TABLE shop.order_lines (
    order_id uuid, line int, sku text, qty int,
    PRIMARY KEY (order_id, line)
);`)
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := plan.Diff(current, desired, plan.Options{DropColumns: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, st := range p.Statements {
		if st.Destructive {
			fmt.Println("-- destructive")
		}
		fmt.Println(st.CQL + ";")
	}
	for _, w := range p.Warnings {
		fmt.Println("-- warning:", w)
	}
	for _, n := range p.Notes {
		fmt.Println("-- note:", n)
	}
	// Output:
	// DROP INDEX shop.orders_by_customer;
	// -- destructive
	// ALTER TABLE shop.orders DROP note;
	// ALTER TYPE shop.address ADD zip text;
	// CREATE TABLE shop.order_lines (
	//     order_id uuid,
	//     line int,
	//     qty int,
	//     sku text,
	//     PRIMARY KEY (order_id, line)
	// ) WITH CLUSTERING ORDER BY (line ASC);
	// ALTER TABLE shop.orders ADD total decimal;
	// ALTER TABLE shop.orders WITH comment = 'orders by id' AND gc_grace_seconds = 864000;
	// CREATE CUSTOM INDEX orders_by_customer ON shop.orders (customer) USING 'org.apache.cassandra.index.sai.StorageAttachedIndex';
	// -- warning: ALTER TABLE shop.orders DROP note drops the data of column note
	// -- note: index shop.orders_by_customer changes from (shop.orders (customer)) to (shop.orders (customer) USING 'org.apache.cassandra.index.sai.StorageAttachedIndex'): it is dropped and created again, which rebuilds it from its table's data
}
