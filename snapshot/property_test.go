package snapshot_test

import (
	"errors"
	"testing"

	"pgregory.net/rapid"

	"github.com/metalog/metalog/internal/testkit/schematest"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
	"github.com/metalog/metalog/snapshot"
)

// genSchema draws a schema of every kind of object from schematest at a
// random epoch, then drops some of its tables at the epochs after: one a
// cluster could reach, holding the records of dropped objects.
func genSchema(t *rapid.T) schema.Schema {
	epoch := rapid.Uint64Range(1, 1<<40).Draw(t, "epoch")
	s := schematest.Schema(t, schematest.SmallPool, epoch, nil)
	for _, k := range s.Keyspaces() {
		for _, tbl := range k.Tables() {
			if rapid.IntRange(0, 4).Draw(t, "drop") != 0 {
				continue
			}
			epoch++
			// A table a view is built on is refused and stays.
			if ns, _, _, err := schema.Apply(s, &schema.DropTable{Keyspace: k.Name, Name: tbl.Name}, schema.Env{Epoch: epoch}); err == nil {
				s = ns
			}
		}
	}
	return s
}

func genContents(t *rapid.T) *snapshot.Contents {
	c := &snapshot.Contents{
		Epoch:  rapid.Uint64().Draw(t, "epoch"),
		Index:  rapid.Uint64().Draw(t, "index"),
		Schema: genSchema(t),
	}
	ids := rapid.SliceOfNDistinct(rapid.StringN(1, 40, -1), 0, 20, rapid.ID[string]).Draw(t, "request ids")
	for _, id := range ids {
		c.Requests = append(c.Requests, snapshot.Request{ID: id, Record: rapid.SliceOfN(rapid.Byte(), 0, 200).Draw(t, "record")})
	}
	if rapid.Bool().Draw(t, "guardrails") {
		c.Sections = []snapshot.Section{{Tag: snapshot.SectionGuardrails, Data: rapid.SliceOfN(rapid.Byte(), 0, 50).Draw(t, "guardrails data")}}
	}
	return c
}

// TestPropertyRoundTrip: Encode then Decode gives the same digest, DESCRIBE
// text, epoch, index, requests and sections, and re-encodes to the same
// bytes.
func TestPropertyRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genContents(t)
		b := snapshot.Encode(nil, c)
		got, err := snapshot.Decode(b)
		if err != nil {
			t.Fatalf("Decode: %v\n%s", err, describe.Schema(c.Schema))
		}
		sameContents(t, c, got)
		if string(snapshot.Encode(nil, got)) != string(b) {
			t.Fatal("re-encoding is not canonical")
		}
	})
}

// TestPropertyCorruptionDetected: changing any single byte of a snapshot
// is detected.
func TestPropertyCorruptionDetected(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := snapshot.Encode(nil, genContents(t))
		i := rapid.IntRange(0, len(b)-1).Draw(t, "byte")
		delta := rapid.ByteRange(1, 255).Draw(t, "xor")
		b[i] ^= delta
		if c, err := snapshot.Decode(b); !errors.Is(err, snapshot.ErrCorrupt) {
			t.Fatalf("byte %d of %d xor %#x: Decode = %v, %v", i, len(b), delta, c, err)
		}
	})
}
