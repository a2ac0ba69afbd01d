package schema_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// richKeyspace is a keyspace with every kind of object: types using each
// other, tables using them with dropped columns and options, and plain
// and custom indexes.
const richKeyspace = `
CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3} AND durable_writes = false;
CREATE TYPE ks.zaddr (street text, zip int);
CREATE TYPE ks.person (name text, home frozen<zaddr>, tags set<text>);
CREATE TABLE ks.users (id uuid PRIMARY KEY, who frozen<person>, v text, m map<text, int>) WITH comment = 'x';
CREATE TABLE ks.events (k int, c timeuuid, v text, gone int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC);
ALTER TABLE ks.events DROP gone;
CREATE INDEX ON ks.users (keys(m));
CREATE CUSTOM INDEX by_v ON ks.events (v) USING 'StorageAttachedIndex' WITH OPTIONS = {'case_sensitive': 'false'};
CREATE KEYSPACE other WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE other.t (k int PRIMARY KEY);
`

// richEncoding returns the keyspace ks of richKeyspace and its encoding.
func richEncoding(t testing.TB) (*schema.Keyspace, []byte) {
	s, _ := schemakit.Exec(t, schema.Schema{}, richKeyspace)
	k, _ := s.Keyspace("ks")
	return k, schema.AppendKeyspaceObjects(nil, k)
}

// TestKeyspaceObjectsRoundTrip checks that a keyspace with objects of every
// kind, and an empty one, decode to keyspaces equal in everything: digest,
// bookkeeping, DESCRIBE text and encoding.
func TestKeyspaceObjectsRoundTrip(t *testing.T) {
	s, _ := schemakit.Exec(t, schema.Schema{}, richKeyspace)
	for _, name := range []string{"ks", "other"} {
		k, _ := s.Keyspace(name)
		b := schema.AppendKeyspaceObjects([]byte("prefix"), k)[len("prefix"):]
		got, err := schema.DecodeKeyspaceObjects(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkSameKeyspace(t, got, k)
	}
	var b schema.Builder
	b.PutKeyspace(&schema.Keyspace{Name: "e", Replication: schema.Replication{Class: schema.SimpleStrategy, Options: map[string]string{"replication_factor": "1"}}})
	k, _ := b.Schema().Keyspace("e")
	got, err := schema.DecodeKeyspaceObjects(schema.AppendKeyspaceObjects(nil, k))
	if err != nil {
		t.Fatal(err)
	}
	checkSameKeyspace(t, got, k)
}

// TestDecodeKeyspaceObjectsPrefixes checks that every proper prefix of a
// valid encoding is refused with an ErrInvalid *Error, and that no byte
// flipped makes the decoder panic.
func TestDecodeKeyspaceObjectsPrefixes(t *testing.T) {
	_, b := richEncoding(t)
	for i := range len(b) {
		if _, err := schema.DecodeKeyspaceObjects(b[:i]); !isInvalid(err) {
			t.Fatalf("prefix of %d of %d bytes: err = %v, want an ErrInvalid *schema.Error", i, len(b), err)
		}
	}
	for i := range len(b) {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			c := append([]byte(nil), b...)
			c[i] ^= x
			if _, err := schema.DecodeKeyspaceObjects(c); err != nil && !isInvalid(err) {
				t.Fatalf("byte %d ^ %#x: err = %v, want an ErrInvalid *schema.Error", i, x, err)
			}
		}
	}
}

// isInvalid reports whether err is an ErrInvalid *schema.Error.
func isInvalid(err error) bool {
	var se *schema.Error
	return errors.As(err, &se) && errors.Is(err, schema.ErrInvalid)
}

// objectsEncoding builds an encoding by hand, as AppendKeyspaceObjects
// lays it out, so that tests can make well-formed records that do not fit
// together.
func objectsEncoding(ks []byte, types, tables, indexes [][]byte) []byte {
	b := []byte{schema.EncodingVersion, 'O'}
	b = binary.AppendUvarint(b, uint64(len(ks)))
	b = append(b, ks...)
	for _, list := range [][][]byte{types, tables, indexes} {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for _, rec := range list {
			b = binary.AppendUvarint(b, uint64(len(rec)))
			b = append(b, rec...)
		}
	}
	return b
}

// TestDecodeKeyspaceObjectsCorrupt checks the refusals of records that are
// each valid but do not make a keyspace, and of a bad header or tail.
func TestDecodeKeyspaceObjectsCorrupt(t *testing.T) {
	s, _ := schemakit.Exec(t, schema.Schema{}, richKeyspace)
	k, _ := s.Keyspace("ks")
	ks := schema.AppendKeyspace(nil, k)
	users, _ := k.Table("users")
	events, _ := k.Table("events")
	zaddr, _ := k.UserType("zaddr")
	person, _ := k.UserType("person")
	otherT, _ := s.Table("other", "t")
	byV, _ := k.Index("by_v")
	enc := func(v any) []byte {
		switch v := v.(type) {
		case *schema.Table:
			return schema.AppendTable(nil, v)
		case *schema.UserType:
			return schema.AppendUserType(nil, v)
		case *schema.Index:
			return schema.AppendIndex(nil, v)
		}
		t.Fatalf("no encoding for a %T", v)
		return nil
	}
	list := func(vs ...any) [][]byte {
		var out [][]byte
		for _, v := range vs {
			out = append(out, enc(v))
		}
		return out
	}
	valid := schema.AppendKeyspaceObjects(nil, k)
	types := list(person, zaddr)
	noObjects := objectsEncoding(ks, nil, nil, nil)
	// The three zero counts of noObjects replaced by a type count of 65535.
	hugeCount := append(noObjects[:len(noObjects)-3:len(noObjects)-3], 0xff, 0xff, 0x03)
	for _, tt := range []struct {
		name, reason string
		b            []byte
	}{
		{"empty", "unexpected end of input", nil},
		{"bad version", "unsupported format version", append([]byte{9}, valid[1:]...)},
		{"keyspace record kind", "record kind", ks},
		{"trailing byte", "1 trailing bytes", append(append([]byte(nil), valid...), 0)},
		{"keyspace record is a table", "the keyspace record", objectsEncoding(enc(users), nil, nil, nil)},
		{"type record is a table", "type 0", objectsEncoding(ks, list(users), nil, nil)},
		{"types out of order", "names are not sorted and unique", objectsEncoding(ks, list(zaddr, person), nil, nil)},
		{"duplicate type", "names are not sorted and unique", objectsEncoding(ks, list(zaddr, zaddr), nil, nil)},
		{"type uses a missing type", "type ks.zaddr it uses does not exist", objectsEncoding(ks, list(person), nil, nil)},
		{"table uses a missing type", "type ks.person it uses does not exist", objectsEncoding(ks, nil, list(users), nil)},
		{"table of another keyspace", "belongs to keyspace other", objectsEncoding(ks, nil, list(otherT), nil)},
		{"duplicate table", "names are not sorted and unique", objectsEncoding(ks, types, list(events, events), nil)},
		{"index on a missing table", "index 0", objectsEncoding(ks, types, list(users), list(byV))},
		{"huge count", "count 65535 exceeds what the 0 bytes left can hold", hugeCount},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := schema.DecodeKeyspaceObjects(tt.b)
			if !isInvalid(err) || !strings.Contains(err.Error(), tt.reason) {
				t.Fatalf("got %v, err = %v, want an ErrInvalid *schema.Error saying %q", got, err, tt.reason)
			}
		})
	}
	if _, err := schema.DecodeKeyspaceObjects(objectsEncoding(ks, types, list(events, users), list(byV))); err != nil {
		t.Errorf("a hand-made valid encoding is refused: %v", err)
	}
}

// FuzzDecodeKeyspaceObjects checks that any input decodes or is refused
// with ErrInvalid, and that a keyspace that decodes is whole: it re-encodes
// to an encoding that decodes to the same keyspace.
func FuzzDecodeKeyspaceObjects(f *testing.F) {
	_, b := richEncoding(f)
	f.Add(b)
	f.Add([]byte{})
	f.Add([]byte{schema.EncodingVersion, 'O'})
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := schema.DecodeKeyspaceObjects(b)
		if err != nil {
			if !isInvalid(err) {
				t.Fatalf("error %v is not an ErrInvalid *schema.Error", err)
			}
			return
		}
		again, err := schema.DecodeKeyspaceObjects(schema.AppendKeyspaceObjects(nil, k))
		if err != nil {
			t.Fatalf("re-encoded keyspace does not decode: %v", err)
		}
		checkSameKeyspace(t, again, k)
	})
}

// fataler is what the checks need of a *testing.T or *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// checkSameKeyspace fails unless got equals want in everything Undo relies
// on, and got's maintained digest equals its recomputed one.
func checkSameKeyspace(t fataler, got, want *schema.Keyspace) {
	t.Helper()
	if g, w := schema.KeyspaceState(got), schema.KeyspaceState(want); g != w {
		t.Fatalf("decoded keyspace differs (-want +got):\n%s", cmp.Diff(w, g))
	}
	if g, w := describe.Keyspace(got), describe.Keyspace(want); g != w {
		t.Fatalf("decoded keyspace describes differently (-want +got):\n%s", cmp.Diff(w, g))
	}
	if g, w := schema.AppendKeyspaceObjects(nil, got), schema.AppendKeyspaceObjects(nil, want); string(g) != string(w) {
		t.Fatalf("decoded keyspace re-encodes differently")
	}
	sum, computed, size, computedSize, count, computedCount := schema.KeyspaceDigest(got)
	if sum != computed || size != computedSize || count != computedCount {
		t.Fatalf("decoded keyspace's digest %x/%d/%d is not the computed %x/%d/%d", sum, size, count, computed, computedSize, computedCount)
	}
}
