package metadata

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema/cql"
	"github.com/metalog/metalog/schema/describe"
)

// corpusDir holds schema files modelled on public projects' .cql files
// (testdata/README.md says which file each one is modelled on).
const corpusDir = "../testdata/corpus"

// corpusFiles says how a user loads each corpus file, as its model's
// project does, with the guardrails an operator sets for it.
var corpusFiles = []struct {
	file string
	// keyspace is the default keyspace a user gives (metalog exec -k),
	// as the project's tool connects with its keyspace set.
	keyspace string
	// setup runs first: the keyspace the project's tool or docs make.
	setup string
	// after is a corpus file loaded first (the project loads it first).
	after string
	// subs are placeholder and value pairs the project's tool replaces.
	subs []string
	// blocks: the project's schema manager runs each block between lines
	// "-- #" as one statement, leaving out lines starting with "--".
	blocks bool
	// guardrails are the settings an operator changes first (metalog
	// guardrails set name=value), e.g. to allow a feature off by default.
	guardrails []string
	// refused is the refusal expected, for forms metalog refuses by
	// design or does not take yet.
	refused string
}{
	{file: "tracing_spans.cql"},
	{file: "tracing_lookups.cql", after: "tracing_spans.cql"},
	{file: "trace_store.cql", subs: []string{
		"${keyspace}", "spans_test",
		"${replication}", "{'class': 'SimpleStrategy', 'replication_factor': '1'}",
		"${span_ttl}", "172800", "${link_ttl}", "0", "${window}", "96"}},
	{file: "workflow_core.cql", keyspace: "jobs", setup: simpleKeyspace("jobs")},
	{file: "workflow_visibility.cql", keyspace: "jobs_visibility", setup: simpleKeyspace("jobs_visibility")},
	{file: "workflow_bootstrap.cql", keyspace: "jobs", setup: simpleKeyspace("jobs"),
		refused: "INSERT is a data statement"}, // by design
	{file: "repair_runs.cql", keyspace: "scheduler", setup: simpleKeyspace("scheduler")},
	{file: "device_keyspace.cql"},
	{file: "device_telemetry.cql", after: "device_keyspace.cql"},
	{file: "video_search.cql", setup: "CREATE KEYSPACE clips WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1}"},
	{file: "media_accounts.cql", guardrails: []string{"dynamic_data_masking_enabled=true"}},
	{file: "event_journal.cql", setup: "CREATE KEYSPACE IF NOT EXISTS journal WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"},
	{file: "metric_series.cql", subs: []string{"${keyspace}", "series_store"}, blocks: true},
	{file: "sample_index.cql", subs: []string{"$KEYSPACE$", "samples", "$REPLICATION_FACTOR$", "1"}},
	{file: "alarm_history.cql"},
	{file: "tag_match_udf.cql", setup: simpleKeyspace("series"), guardrails: []string{"user_defined_functions_enabled=true"}},
	{file: "graph_edges.cql", setup: simpleKeyspace("graph"), subs: []string{"{{ graph_keyspace }}", "graph"},
		refused: "COMPACT STORAGE is not supported"}, // by design
	{file: "station_readings.cql"},
	{file: "profile_types_dump.cql"},
	{file: "sidecar_style_dump.cql"},
	{file: "journal_two_keyspaces.cql"},
	{file: "tweet_feed.cql"},
	{file: "ticket_views.cql", guardrails: []string{"materialized_views_enabled=true"}},
}

// simpleKeyspace is the keyspace a project's setup tool makes for a
// one-node test cluster.
func simpleKeyspace(name string) string {
	return "CREATE KEYSPACE " + name + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"
}

// schemaManagerBlocks returns text as its project's schema manager runs
// it: the blocks between lines "-- #", without the lines that start with
// "--", each one statement.
func schemaManagerBlocks(text string) string {
	var stmts []string
	for _, block := range regexp.MustCompile(`(?m)^-- #[ \t]*$`).Split(text, -1) {
		var keep []string
		for _, line := range strings.Split(block, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "--") {
				keep = append(keep, line)
			}
		}
		if stmt := strings.TrimSuffix(strings.TrimSpace(strings.Join(keep, "\n")), ";"); stmt != "" {
			stmts = append(stmts, stmt)
		}
	}
	return strings.Join(stmts, ";\n") + ";"
}

// corpusText reads a corpus file and prepares it as its project's tool
// does: placeholders replaced, blocks made statements.
func corpusText(t *testing.T, file string, subs []string, blocks bool) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpusDir, file))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for i := 0; i+1 < len(subs); i += 2 {
		text = strings.ReplaceAll(text, subs[i], subs[i+1])
	}
	if blocks {
		text = schemaManagerBlocks(text)
	}
	return text
}

// loadAsMember executes text as a member takes one request (metalog exec
// -f, with keyspace as -k): parsed, pre-checked as a new request (the
// admission rules included), then applied as the log applies it.
func loadAsMember(m *ClusterMetadata, text, keyspace string) (*ClusterMetadata, error) {
	cmd := Command{Text: text, Keyspace: keyspace, MaxMutationSize: 16 << 20}
	stmts, err := cql.Parse(text)
	if err != nil {
		return m, err
	}
	if err := m.Precheck(cmd, stmts); err != nil {
		return m, err
	}
	next, _, _, err := m.ApplyParsed(cmd, stmts, m.Index+1)
	return next, err
}

// TestCorpusLoadsAndRoundTrips loads every corpus file as a user would,
// then executes the DESCRIBE of what it made on a fresh member: the
// DESCRIBE text must be the same, and the digest that of a second round
// trip. A file with a known
// refusal must be refused with that message, changing nothing.
func TestCorpusLoadsAndRoundTrips(t *testing.T) {
	byFile := map[string]int{}
	for i, f := range corpusFiles {
		byFile[f.file] = i
	}
	for _, f := range corpusFiles {
		t.Run(strings.TrimSuffix(f.file, ".cql"), func(t *testing.T) {
			settings := corpusGuardrails(t, f.guardrails)
			m := &ClusterMetadata{Guardrails: settings}
			var err error
			if f.setup != "" {
				if m, err = loadAsMember(m, f.setup, ""); err != nil {
					t.Fatalf("setup: %v", err)
				}
			}
			if f.after != "" {
				p := corpusFiles[byFile[f.after]]
				if m, err = loadAsMember(m, corpusText(t, p.file, p.subs, p.blocks), p.keyspace); err != nil {
					t.Fatalf("loading %s first: %v", p.file, err)
				}
			}
			text := corpusText(t, f.file, f.subs, f.blocks)
			next, err := loadAsMember(m, text, f.keyspace)
			if f.refused != "" {
				if err == nil || !strings.Contains(err.Error(), f.refused) {
					t.Fatalf("load: %v, want it refused with %q", err, f.refused)
				}
				if next.Epoch != m.Epoch || next.Schema.Digest() != m.Schema.Digest() {
					t.Fatalf("a refused file changed the schema (epoch %d to %d)", m.Epoch, next.Epoch)
				}
				return
			}
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			described := describe.Schema(next.Schema)
			fresh := &ClusterMetadata{Guardrails: settings}
			again, err := loadAsMember(fresh, described, "")
			if err != nil {
				t.Fatalf("executing the DESCRIBE output on a fresh member: %v\n%s", err, described)
			}
			got := describe.Schema(again.Schema)
			if got != described {
				t.Errorf("DESCRIBE differs after the round trip:\nfirst:\n%s\nsecond:\n%s", described, got)
			}
			// DESCRIBE lists a table's columns in Cassandra's order, not in
			// the order the file made them, so the round trip may store them
			// in another order, which the digest sees; a second round trip
			// stores them as the first did.
			twice, err := loadAsMember(&ClusterMetadata{Guardrails: settings}, got, "")
			if err != nil {
				t.Fatalf("executing the DESCRIBE output a second time: %v", err)
			}
			if twice.Schema.Digest() != again.Schema.Digest() {
				t.Errorf("digest differs after a second round trip")
			}
			if again.Schema.ObjectCount() != next.Schema.ObjectCount() || next.Schema.ObjectCount() <= m.Schema.ObjectCount() {
				t.Errorf("objects: loaded %d (from %d before), round trip %d", next.Schema.ObjectCount(), m.Schema.ObjectCount(), again.Schema.ObjectCount())
			}
		})
	}
}

// corpusGuardrails returns the default guardrails with each "name=value"
// of set applied, as metalog guardrails set does.
func corpusGuardrails(t *testing.T, set []string) guardrails.Settings {
	t.Helper()
	s := guardrails.Defaults()
	for _, kv := range set {
		name, value, _ := strings.Cut(kv, "=")
		var err error
		if s, err = s.Set(name, value); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestCorpusTableAndReadmeCoverFiles: every file of testdata/corpus is in
// corpusFiles and has a section in testdata/README.md, and the other way
// round, so that no file is added without saying how it is loaded and
// what it is modelled on.
func TestCorpusTableAndReadmeCoverFiles(t *testing.T) {
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	var onDisk, inTable []string
	for _, e := range entries {
		onDisk = append(onDisk, e.Name())
	}
	for _, f := range corpusFiles {
		inTable = append(inTable, f.file)
	}
	sort.Strings(onDisk)
	sort.Strings(inTable)
	if strings.Join(onDisk, " ") != strings.Join(inTable, " ") {
		t.Errorf("testdata/corpus holds\n  %v\nbut corpusFiles lists\n  %v", onDisk, inTable)
	}
	readme, err := os.ReadFile(filepath.Join(corpusDir, "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range onDisk {
		if !strings.Contains(string(readme), "### `corpus/"+f+"`") {
			t.Errorf("testdata/README.md has no section ### `corpus/%s`", f)
		}
	}
}
