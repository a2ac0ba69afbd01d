package schema_test

import (
	"slices"
	"testing"

	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/schema"
)

func TestFromIterators(t *testing.T) {
	s := schemakit.Build(t, `
CREATE KEYSPACE a WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE KEYSPACE b WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE KEYSPACE c WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TYPE b.u1 (x int);
CREATE TYPE b.u2 (x int);
CREATE TABLE b.t1 (k int PRIMARY KEY, v int, w int);
CREATE TABLE b.t2 (k int PRIMARY KEY, v int);
CREATE INDEX i2 ON b.t1 (v);
CREATE INDEX i1 ON b.t1 (w);
CREATE INDEX i0 ON b.t2 (v);
CREATE FUNCTION b.f(x int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return x;';
CREATE FUNCTION b.g(x int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return x;';
`)
	k, _ := s.Keyspace("b")
	var got []string
	for ks := range schema.KeyspacesFrom(s, "aa") {
		got = append(got, ks.Name)
	}
	for tb := range schema.TablesFrom(k, "t2") {
		got = append(got, tb.Name)
	}
	for ut := range schema.UserTypesFrom(k, "u") {
		got = append(got, ut.Name)
	}
	for f := range schema.FunctionsFrom(k, "f(int)") {
		got = append(got, f.Name)
	}
	for ix := range schema.IndexesFrom(k, "t1", "i2") {
		got = append(got, ix.Name)
	}
	for range schema.TablesFrom(nil, "") {
		got = append(got, "nil keyspace")
	}
	want := []string{"b", "c", "t2", "u1", "u2", "f", "g", "i2", "i0"}
	if !slices.Equal(got, want) {
		t.Errorf("From iterators: %q, want %q", got, want)
	}
	for ks := range schema.KeyspacesFrom(s, "") {
		if ks.Name != "a" {
			t.Errorf("first keyspace %q", ks.Name)
		}
		break // the loop stops the iterator
	}
}

func TestOptionReaders(t *testing.T) {
	if s, ok := schema.OptionString("'it''s'"); !ok || s != "it's" {
		t.Errorf("OptionString = %q, %v", s, ok)
	}
	if _, ok := schema.OptionString("3"); ok {
		t.Error("OptionString took a number")
	}
	if f, ok := schema.OptionNumber("0.25"); !ok || f != 0.25 {
		t.Errorf("OptionNumber = %v, %v", f, ok)
	}
	if n, ok := schema.OptionInt("3600"); !ok || n != 3600 {
		t.Errorf("OptionInt = %v, %v", n, ok)
	}
	if _, ok := schema.OptionInt("1.5"); ok {
		t.Error("OptionInt took a fraction")
	}
	if b, ok := schema.OptionBool("false"); !ok || b {
		t.Errorf("OptionBool = %v, %v", b, ok)
	}
	if m, ok := schema.OptionMap("{'class': 'x', 'min_threshold': '4'}"); !ok || m["class"] != "x" || m["min_threshold"] != "4" || len(m) != 2 {
		t.Errorf("OptionMap = %v, %v", m, ok)
	}
	if m, ok := schema.OptionBlobMap("{'a': 0x0aff}"); !ok || string(m["a"]) != "\x0a\xff" {
		t.Errorf("OptionBlobMap = %v, %v", m, ok)
	}
	if _, ok := schema.OptionBlobMap("{'a': 'b'}"); ok {
		t.Error("OptionBlobMap took a string value")
	}
}
