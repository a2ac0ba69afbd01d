package metadata

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/metalog/metalog/schema"
)

// TestCommandEncodedSize checks that EncodedSize is exactly what Marshal
// appends, for any command, so that Marshal grows its buffer once.
func TestCommandEncodedSize(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		c := Command{
			Kind:            CommandKind(rapid.IntRange(0, int(numKinds)-1).Draw(rt, "kind")),
			RequestID:       rapid.String().Draw(rt, "request id"),
			Keyspace:        rapid.String().Draw(rt, "keyspace"),
			Text:            rapid.StringN(0, 400, -1).Draw(rt, "text"),
			MaxMutationSize: rapid.Int64Range(0, 1<<62).Draw(rt, "max mutation size"),
			Guardrails:      rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(rt, "guardrails"),
			Principal:       rapid.String().Draw(rt, "principal"),
			Time:            rapid.Int64().Draw(rt, "time"),
			Atomic:          rapid.Bool().Draw(rt, "atomic"),
			HasIfEpoch:      rapid.Bool().Draw(rt, "has if epoch"),
			IfEpoch:         rapid.Uint64().Draw(rt, "if epoch"),
			Role:            rapid.String().Draw(rt, "role"),
			Rules:           rapid.SampledFrom([]uint64{schema.RulesOriginal, schema.CurrentRules, 1 << 40}).Draw(rt, "rules"),
		}
		if got, want := c.EncodedSize(), len(c.Marshal(nil)); got != want {
			rt.Fatalf("EncodedSize() = %d, Marshal appends %d bytes", got, want)
		}
	})
}

// TestCommandMarshalAllocs checks that Marshal into a nil buffer
// allocates once (it grew its buffer three times for a CREATE TABLE
// before it sized it).
func TestCommandMarshalAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	c := Command{RequestID: "server-0123456789abcdef0123456789abcdef", Text: "CREATE TABLE ks.t_1 (id int PRIMARY KEY, v text)",
		MaxMutationSize: 16 << 20, Principal: "anonymous", Time: 1764633600123456789}
	if n := testing.AllocsPerRun(100, func() { _ = c.Marshal(nil) }); n != 1 {
		t.Errorf("Marshal(nil) makes %.0f allocations, want 1", n)
	}
}
