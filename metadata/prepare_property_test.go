package metadata

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/metalog/metalog/internal/ddlgen"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// TestPreparedApplyIsApply: random DDL applied by two state machines, one
// given the prepared result of every command the pre-check admits
// (Config.Expected), the other executing every command as it applies.
// Some commands are prepared on a state another command then moves past
// (the prepared result must not be used), some are refused by the
// pre-check (nothing is prepared). The results, the metadata, the
// request records and the encoded history must be the same, byte for
// byte, and the prepared results must have been used whenever they
// were prepared on the state they applied on.
func TestPreparedApplyIsApply(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		exp := new(Expected)
		with, err := Open(Config{Dir: t.TempDir(), Expected: exp})
		if err != nil {
			rt.Fatal(err)
		}
		defer with.Close()
		without, err := Open(Config{Dir: t.TempDir()})
		if err != nil {
			rt.Fatal(err)
		}
		defer without.Close()
		index, wantUsed := uint64(0), uint64(0)
		apply := func(data []byte) {
			index++
			e := []Entry{{Index: index, Data: data}}
			got, err1 := with.Apply(e)
			want, err2 := without.Apply(e)
			if err1 != nil || err2 != nil {
				rt.Fatalf("apply: %v, %v", err1, err2)
			}
			if d := cmp.Diff(resultsText(want), resultsText(got)); d != "" {
				rt.Fatalf("entry %d: results differ (-executed +prepared):\n%s", index, d)
			}
		}
		for i := range rapid.IntRange(20, 80).Draw(rt, "commands") {
			text := ddlgen.Statement(rt, "stmt")
			parsed, err := cql.Parse(text)
			if err != nil {
				rt.Fatalf("ddlgen drew %q, which does not parse: %v", text, err)
			}
			cmd := Command{RequestID: fmt.Sprintf("r%d", i), Text: text, Time: int64(i), Rules: uint64(schema.CurrentRules), Cluster: 7,
				Atomic: rapid.Bool().Draw(rt, "atomic"), MaxMutationSize: 1 << 20}
			data := cmd.Marshal(nil)
			p, perr := with.Current().Prepare(cmd, parsed, data)
			if perr != nil {
				continue // refused up front: never proposed
			}
			exp.Add(p)
			if rapid.IntRange(0, 4).Draw(rt, "stale") == 0 {
				// Another member's command applies first.
				other := Command{RequestID: fmt.Sprintf("o%d", i), Text: ddlgen.Statement(rt, "other"), Time: int64(i), Rules: uint64(schema.CurrentRules)}
				apply(other.Marshal(nil))
			} else {
				wantUsed++
			}
			apply(data)
			exp.Remove(p)
		}
		if used, _ := exp.Counts(); used != wantUsed {
			rt.Fatalf("prepared results used %d times, want %d", used, wantUsed)
		}
		checkSameState(rt, with, without)
	})
}

// resultsText is rs with errors as text, for comparing.
func resultsText(rs []Result) []any {
	var out []any
	for _, r := range rs {
		msg := ""
		if r.Err != nil {
			msg = r.Err.Error()
		}
		out = append(out, r.Outcome, msg)
	}
	return out
}

// checkSameState fails unless a and b hold the same metadata, request
// records and encoded history.
func checkSameState(rt *rapid.T, a, b *StateMachine) {
	ma, mb := a.Current(), b.Current()
	if ma.Epoch != mb.Epoch || ma.Index != mb.Index || ma.Schema.Digest() != mb.Schema.Digest() {
		rt.Fatalf("metadata differs: epoch %d/%d, index %d/%d", ma.Epoch, mb.Epoch, ma.Index, mb.Index)
	}
	if d := cmp.Diff(requestsText(mb.Requests), requestsText(ma.Requests)); d != "" {
		rt.Fatalf("request records differ:\n%s", d)
	}
	ha, _, err1 := a.EncodedHistory(0, ma.Epoch, int(ma.Epoch)+1)
	hb, _, err2 := b.EncodedHistory(0, mb.Epoch, int(mb.Epoch)+1)
	if err1 != nil || err2 != nil {
		rt.Fatalf("history: %v, %v", err1, err2)
	}
	if d := cmp.Diff(hb, ha); d != "" {
		rt.Fatalf("encoded history differs:\n%s", d)
	}
}

// requestsText is every record of r, oldest first, with its error as
// text, and r's size.
func requestsText(r Requests) []any {
	out := []any{r.Bytes()}
	for _, id := range r.IDs() {
		rec, _ := r.Get(id)
		msg := ""
		if rec.Err != nil {
			msg = rec.Err.Error()
		}
		out = append(out, id, rec.Index, rec.Fingerprint, rec.Outcome, msg)
	}
	return out
}
