package metadata

import (
	"encoding/hex"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/metalog/metalog/schema"
)

// TestCommandClusterEncoding: the cluster id round-trips after the rules
// version; a command without one encodes as before it existed (no flag,
// no bytes); the flag without an id, with id 0, or on a version 1 command
// is a malformed command.
func TestCommandClusterEncoding(t *testing.T) {
	c := Command{Text: "CREATE TABLE a.b (k int PRIMARY KEY)", Atomic: true, HasIfEpoch: true, IfEpoch: 3,
		Role: "ddl@a", Rules: schema.CurrentRules, Cluster: 0x9f3a00c2d41e7b55, Time: 11}
	b := c.Marshal(nil)
	if len(b) != c.EncodedSize() {
		t.Errorf("Marshal wrote %d bytes, EncodedSize says %d", len(b), c.EncodedSize())
	}
	if b[2]&flagCluster == 0 {
		t.Errorf("no cluster flag in %x", b)
	}
	got, err := UnmarshalCommand(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	// As a member of the release before cluster ids logged a CREATE
	// TABLE: version 2, kind DDL, no flags; request id "r", keyspace "",
	// text "x", max mutation size 0, no guardrails, principal "", time 0.
	old := []byte{2, 0, 0, 1, 'r', 0, 1, 'x', 0, 0, 0, 0}
	if again := (Command{RequestID: "r", Text: "x"}).Marshal(nil); hex.EncodeToString(again) != hex.EncodeToString(old) {
		t.Errorf("a command without a cluster encodes as %x, want the bytes of before, %x", again, old)
	}
	body := (Command{Text: "x", Cluster: 1}).Marshal(nil)
	body = body[:len(body)-1]
	for name, b := range map[string][]byte{
		"missing":   body,
		"zero":      append(append([]byte{}, body...), 0),
		"version 1": {1, 0, flagCluster, 0, 0, 1, 'x', 0, 0, 1},
	} {
		if _, err := UnmarshalCommand(b); !errors.Is(err, ErrBadCommand) {
			t.Errorf("%s: err = %v, want ErrBadCommand", name, err)
		}
	}
}

// tableIDScript creates a keyspace and a table (epochs 2 and 3, after the
// guardrail change that allows views), then a table, a view and a copy of
// the first table in one atomic request (epoch 4, seq 0 to 2).
var tableIDScript = []Command{
	{Text: ksDDL},
	{Text: "CREATE TABLE shop.t (k int PRIMARY KEY, v int)"},
	{Atomic: true, Text: "CREATE TABLE shop.u (k int PRIMARY KEY, v int); CREATE MATERIALIZED VIEW shop.u_by_v AS SELECT * FROM shop.u WHERE v IS NOT NULL AND k IS NOT NULL PRIMARY KEY (v, k); CREATE TABLE shop.w LIKE shop.t"},
}

// tableIDs applies script, each command under rules and cluster, to a new
// state machine in dir, and returns the ids of the tables it made.
func tableIDs(t *testing.T, dir string, rules, cluster uint64) map[string]string {
	t.Helper()
	sm := openSM(t, dir)
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	if r := a.apply(setGuardrails(t, "materialized_views_enabled", "true")); r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	for _, c := range tableIDScript {
		c.Rules, c.Cluster = rules, cluster
		for _, r := range a.apply(c) {
			if r.Err != nil {
				t.Fatalf("%s: %v", c.Text, r.Err)
			}
		}
	}
	return idsOf(sm)
}

func idsOf(sm *StateMachine) map[string]string {
	ids := map[string]string{}
	k, _ := sm.Current().Schema.Keyspace("shop")
	for _, tb := range k.Tables() {
		ids[tb.Name] = tb.ID.String()
	}
	return ids
}

// TestTableIDsFromTheLoggedCluster: commands logged without a cluster id
// (by earlier releases) give the ids they always gave, replayed on this
// build; commands that carry one give ids of that cluster, the same on
// every state machine that applies them, after a reopen from the store,
// and different from another cluster's at the same epochs.
func TestTableIDsFromTheLoggedCluster(t *testing.T) {
	old := tableIDs(t, t.TempDir(), schema.RulesOriginal, 0)
	wantOld := map[string]string{
		"t":      "00000000-0000-8000-836d-6c6700000000",
		"u":      "00000000-0000-8000-846d-6c6700000000",
		"u_by_v": "00000000-0000-8000-846d-6c6700000001",
		"w":      "00000000-0000-8000-846d-6c6700000002",
	}
	if diff := cmp.Diff(wantOld, old); diff != "" {
		t.Errorf("ids of commands without a cluster, as earlier releases gave them (-want +got):\n%s", diff)
	}
	const clusterA, clusterB = 0x5eed5eed00000001, 0x5eed5eed00000002
	dir := t.TempDir()
	a1 := tableIDs(t, dir, schema.CurrentRules, clusterA)
	a2 := tableIDs(t, t.TempDir(), schema.CurrentRules, clusterA)
	b := tableIDs(t, t.TempDir(), schema.CurrentRules, clusterB)
	if diff := cmp.Diff(a1, a2); diff != "" {
		t.Errorf("two members of one cluster disagree (-first +second):\n%s", diff)
	}
	for name, id := range a1 {
		if b[name] == id {
			t.Errorf("table %s: clusters A and B both give it id %s", name, id)
		}
		if old[name] == id {
			t.Errorf("table %s: cluster A gives it the epoch-only id %s", name, id)
		}
	}
	if want := schema.ClusterTableID(clusterA, 3, 0).String(); a1["t"] != want {
		t.Errorf("shop.t: id %s, want ClusterTableID(A, 3, 0) = %s", a1["t"], want)
	}
	sm := openSM(t, dir)
	defer sm.Close()
	if diff := cmp.Diff(a1, idsOf(sm)); diff != "" {
		t.Errorf("ids reopened from the store (-applied +reopened):\n%s", diff)
	}
}

// oldEntry returns the bytes a release before cluster ids logged for a
// non-atomic DDL command of text under rules (0: none), written out by
// hand as that release laid them out, not by this build's Marshal:
// version 2, kind DDL, flags (flagRules when rules is set), request id,
// keyspace "", text, max mutation size 0, no guardrails, principal "",
// time 0, then the rules version.
func oldEntry(requestID, text string, rules byte) []byte {
	flags := byte(0)
	if rules != 0 {
		flags = flagRules
	}
	b := []byte{2, 0, flags, byte(len(requestID))}
	b = append(b, requestID...)
	b = append(b, 0, byte(len(text)))
	b = append(b, text...)
	b = append(b, 0, 0, 0, 0)
	if rules != 0 {
		b = append(b, rules)
	}
	return b
}

// TestReplayOldEntriesKeepTheirIDs: a log written by the release before
// cluster ids, replayed by this build (as a member restarting, or one
// catching up from the log after a forced new cluster changed its own
// cluster id), gives its tables the epoch-only ids that release gave them,
// with and without a rules version; an entry of this build after them,
// carrying the proposer's cluster id, gives that cluster's id.
func TestReplayOldEntriesKeepTheirIDs(t *testing.T) {
	sm := openSM(t, t.TempDir())
	defer sm.Close()
	log := [][]byte{
		oldEntry("r1", ksDDL, 0),
		oldEntry("r2", "CREATE TABLE shop.t (k int PRIMARY KEY, v int)", 0),
		oldEntry("r3", "CREATE TABLE shop.u (k int PRIMARY KEY, v int); ALTER TABLE shop.t DROP v", byte(schema.RulesDroppedKind)),
		(Command{RequestID: "r4", Text: "CREATE TABLE shop.w (k int PRIMARY KEY)", Rules: schema.CurrentRules, Cluster: 0x5eed}).Marshal(nil),
	}
	entries := make([]Entry, len(log))
	for i, b := range log {
		entries[i] = Entry{Index: uint64(i + 1), Data: b}
	}
	res, err := sm.Apply(entries)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("entry %d: %v", i+1, r.Err)
		}
	}
	want := map[string]string{
		"t": schema.TableID(2, 0).String(),
		"u": schema.TableID(3, 0).String(),
		"w": schema.ClusterTableID(0x5eed, 5, 0).String(),
	}
	if want["t"] != "00000000-0000-8000-826d-6c6700000000" {
		t.Fatalf("TableID(2, 0) = %s, not the id earlier releases gave", want["t"])
	}
	if diff := cmp.Diff(want, idsOf(sm)); diff != "" {
		t.Errorf("ids after the replay (-want +got):\n%s", diff)
	}
}
