package metadata

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// maxErrorBytes is what an error quoting hostile input may take: a few
// names cut to clip.Max bytes and the words around them.
const maxErrorBytes = 4096

// boundedBase is the schema the hostile statements run against.
const boundedBase = ksDDL + `; CREATE TABLE shop.t (id int, c int, v text, m map<text, int>, PRIMARY KEY (id, c));
CREATE TYPE shop.addr (street text); CREATE INDEX t_v_idx ON shop.t (v); CREATE TABLE shop.n (id int PRIMARY KEY, cnt counter)`

// TestErrorsQuoteHostileInputBounded runs statements holding a 1 MB name,
// value or token (@@, replaced by the test) through the whole execute path
// (parse, guardrails, schema): every error stays under a few KB, says which
// statement failed and why, and shows the long input cut with its length.
func TestErrorsQuoteHostileInputBounded(t *testing.T) {
	base := boundedMetadata(t)
	for _, long := range []string{strings.Repeat("a", 1<<20), strings.Repeat("é", 1<<19)} {
		for _, tc := range boundedCases {
			if long[0] != 'a' && !strings.Contains(tc.text, "'@@'") && !strings.Contains(tc.text, `"@@"`) {
				continue // an unquoted name is ASCII
			}
			text := strings.ReplaceAll(tc.text, "@@", long)
			_, _, _, err := base.Apply(Command{Text: text, Keyspace: strings.ReplaceAll(tc.keyspace, "@@", long)}, base.Index+1)
			if err == nil {
				t.Errorf("%.60s: no error", tc.text)
				continue
			}
			msg := err.Error()
			if len(msg) > maxErrorBytes || !utf8.ValidString(msg) {
				t.Errorf("%.60s: error of %d bytes (valid UTF-8: %v): %.300s", tc.text, len(msg), utf8.ValidString(msg), msg)
				continue
			}
			if strings.Contains(msg, long[:clip.Max+2]) {
				t.Errorf("%.60s: error quotes more than %d bytes of the input: %.300s", tc.text, clip.Max, msg)
			}
			for _, want := range tc.want {
				if !strings.Contains(msg, want) {
					t.Errorf("%.60s: error %q does not say %q", tc.text, msg, want)
				}
			}
		}
	}
}

// boundedMetadata is the metadata after boundedBase.
func boundedMetadata(t *testing.T) *ClusterMetadata {
	t.Helper()
	m := &ClusterMetadata{Guardrails: guardrails.Defaults()}
	next, _, _, err := m.Apply(Command{Text: boundedBase}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// boundedCases are statements in which @@ stands for the long input, and
// what their error must say besides the cut input.
var boundedCases = []struct {
	text, keyspace string
	want           []string
}{
	// Keyspaces.
	{text: "CREATE KEYSPACE @@ WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", want: []string{"CREATE KEYSPACE", "must be 1 to 48 characters"}},
	{text: `CREATE KEYSPACE "@@" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`, want: []string{"CREATE KEYSPACE", "is invalid"}},
	{text: "CREATE KEYSPACE k WITH replication = {'class': '@@'}", want: []string{"CREATE KEYSPACE k", "unknown replication strategy class"}},
	{text: "CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': '@@'}", want: []string{"CREATE KEYSPACE k", "replication_factor must be a non-negative integer"}},
	{text: "CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1, '@@': 1}", want: []string{"CREATE KEYSPACE k", "unrecognized strategy option"}},
	{text: "CREATE KEYSPACE k WITH replication = {'class': 'NetworkTopologyStrategy', '@@': 'x'}", want: []string{"CREATE KEYSPACE k", "must be a non-negative integer"}},
	{text: "CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1, '@@': 1, '@@': 2}", want: []string{"line 1:", "given twice"}},
	{text: "CREATE KEYSPACE k WITH @@ = true", want: []string{"line 1:", "unknown keyspace property"}},
	{text: "ALTER KEYSPACE @@ WITH durable_writes = false", want: []string{"ALTER KEYSPACE", "keyspace does not exist"}},
	{text: "DROP KEYSPACE @@", want: []string{"DROP KEYSPACE", "keyspace does not exist"}},
	{text: "USE @@", want: []string{"USE", "does not exist"}},
	// Tables.
	{text: "CREATE TABLE shop.@@ (id int PRIMARY KEY)", want: []string{"CREATE TABLE shop.", "table name"}},
	{text: "CREATE TABLE @@.t (id int PRIMARY KEY)", want: []string{"CREATE TABLE", "keyspace name"}},
	{text: "CREATE TABLE t (id int PRIMARY KEY)", keyspace: "@@", want: []string{"CREATE TABLE", "keyspace"}},
	{text: "CREATE TABLE shop.x (@@ int PRIMARY KEY)", want: []string{"CREATE TABLE shop.x", "column name is longer than 1024 bytes"}},
	{text: `CREATE TABLE shop.x (id int PRIMARY KEY, "@@" text)`, want: []string{"CREATE TABLE shop.x", "column name is longer than 1024 bytes"}},
	{text: "CREATE TABLE shop.x (id int PRIMARY KEY, v @@)", want: []string{"CREATE TABLE shop.x", "unknown type"}},
	{text: "CREATE TABLE shop.x (id int PRIMARY KEY, v frozen<@@>)", want: []string{"CREATE TABLE shop.x", "unknown type"}},
	{text: "CREATE TABLE shop.x (id int PRIMARY KEY, v list<@@>)", want: []string{"CREATE TABLE shop.x"}},
	{text: "CREATE TABLE shop.x (id int, PRIMARY KEY (@@))", want: []string{"CREATE TABLE shop.x", "in PRIMARY KEY"}},
	{text: "CREATE TABLE shop.x (id int, c int, PRIMARY KEY (id, c)) WITH CLUSTERING ORDER BY (@@ ASC)", want: []string{"CREATE TABLE shop.x", "CLUSTERING ORDER BY"}},
	{text: "CREATE TABLE shop.x (id int PRIMARY KEY) WITH @@ = 1", want: []string{"line 1:", "unknown table property"}},
	{text: "CREATE TABLE shop.x (id int PRIMARY KEY) WITH gc_grace_seconds = '@@'", want: []string{"CREATE TABLE shop.x", "gc_grace_seconds", "must be an integer"}},
	{text: "CREATE TABLE shop.x (id int PRIMARY KEY) WITH cdc = '@@'", want: []string{"CREATE TABLE shop.x", "cdc", "true or false"}},
	{text: "CREATE TABLE shop.x (id int PRIMARY KEY) WITH speculative_retry = '@@'", want: []string{"CREATE TABLE shop.x", "speculative retry"}},
	{text: "CREATE TABLE shop.x (id int PRIMARY KEY) WITH read_repair = '@@'", want: []string{"CREATE TABLE shop.x", "read_repair", "must be one of"}},
	{text: "CREATE TABLE shop.x (id int PRIMARY KEY) WITH caching = {'@@': 'ALL'}", want: []string{"CREATE TABLE shop.x", "unknown caching option"}},
	{text: "CREATE TABLE shop.x (id int PRIMARY KEY) WITH caching = {'keys': '@@'}", want: []string{"CREATE TABLE shop.x", "caching keys"}},
	{text: "CREATE TABLE shop.x (id int PRIMARY KEY) WITH compaction = {'class': 'SizeTieredCompactionStrategy', 'min_threshold': '@@'}", want: []string{"CREATE TABLE shop.x", "min_threshold"}},
	{text: "CREATE TABLE shop.x (id int PRIMARY KEY) WITH compression = {'class': 'LZ4Compressor', 'chunk_length_in_kb': '@@'}", want: []string{"CREATE TABLE shop.x", "chunk_length_in_kb"}},
	{text: "CREATE TABLE shop.x (id int PRIMARY KEY) WITH extensions = {'@@': 0x00, '@@': 0x01}", want: []string{"CREATE TABLE shop.x", "given twice"}},
	{text: "DROP TABLE shop.@@", want: []string{"DROP TABLE shop.", "does not exist"}},
	{text: "DROP TABLE @@.t", want: []string{"DROP TABLE", "does not exist"}},
	{text: "ALTER TABLE shop.@@ ADD x int", want: []string{"ALTER TABLE shop.", "does not exist"}},
	{text: "ALTER TABLE shop.t ADD @@ int", want: []string{"ALTER TABLE shop.t", "column name is longer than 1024 bytes"}},
	{text: "ALTER TABLE shop.t ADD x @@", want: []string{"ALTER TABLE shop.t", "unknown type"}},
	{text: "ALTER TABLE shop.t DROP @@", want: []string{"ALTER TABLE shop.t", "does not exist"}},
	{text: "ALTER TABLE shop.t RENAME @@ TO x", want: []string{"ALTER TABLE shop.t", "does not exist"}},
	{text: "ALTER TABLE shop.t RENAME id TO @@", want: []string{"ALTER TABLE shop.t", "column name is longer than 1024 bytes"}},
	{text: "ALTER TABLE shop.t WITH @@ = 1", want: []string{"line 1:", "unknown table property"}},
	{text: "ALTER TABLE shop.t WITH comment = 'x' AND @@ = 1", want: []string{"line 1:", "unknown table property"}},
	{text: "ALTER TABLE shop.n ADD @@ int", want: []string{"ALTER TABLE shop.n"}},
	// Indexes.
	{text: "CREATE INDEX @@ ON shop.t (v)", want: []string{"CREATE INDEX", "index name"}},
	{text: "CREATE INDEX ON shop.t (@@)", want: []string{"CREATE INDEX", "does not exist"}},
	{text: "CREATE INDEX ON shop.@@ (v)", want: []string{"CREATE INDEX", "does not exist"}},
	{text: "CREATE INDEX ON @@.t (v)", want: []string{"CREATE INDEX", "does not exist"}},
	{text: "CREATE INDEX i ON shop.t (@@(m))", want: []string{"line 1:", "unknown index target function"}},
	{text: "CREATE CUSTOM INDEX i ON shop.t (v) USING 'StorageAttachedIndex' WITH OPTIONS = {'@@': 'a', '@@': 'b'}", want: []string{"line 1:", "given twice"}},
	{text: "DROP INDEX shop.@@", want: []string{"DROP INDEX", "does not exist"}},
	{text: "DROP INDEX @@.i", want: []string{"DROP INDEX", "does not exist"}},
	// Types.
	{text: "CREATE TYPE shop.@@ (a int)", want: []string{"CREATE TYPE", "type name"}},
	{text: `CREATE TYPE shop."@@" (a int)`, want: []string{"CREATE TYPE", "type name"}},
	{text: "CREATE TYPE @@.x (a int)", want: []string{"CREATE TYPE", "keyspace"}},
	{text: "CREATE TYPE shop.x (@@ int)", want: []string{"CREATE TYPE shop.x", "field name is longer than 1024 bytes"}},
	{text: "CREATE TYPE shop.x (a @@)", want: []string{"CREATE TYPE shop.x", "unknown type"}},
	{text: "ALTER TYPE shop.@@ ADD b int", want: []string{"ALTER TYPE", "does not exist"}},
	{text: "ALTER TYPE shop.addr ADD @@ int", want: []string{"ALTER TYPE shop.addr", "field name is longer than 1024 bytes"}},
	{text: "ALTER TYPE shop.addr RENAME @@ TO x", want: []string{"ALTER TYPE shop.addr", "unknown field"}},
	{text: "ALTER TYPE shop.addr RENAME street TO @@", want: []string{"ALTER TYPE shop.addr", "field name is longer than 1024 bytes"}},
	{text: "DROP TYPE shop.@@", want: []string{"DROP TYPE", "does not exist"}},
	// Tokens that do not parse.
	{text: "@@", want: []string{"line 1:1: unexpected"}},
	{text: "CREATE @@", want: []string{"line 1:8: unexpected", "bytes), expected KEYSPACE"}},
	{text: "CREATE TABLE shop.x (id int PRIMARY KEY) @@", want: []string{"line 1:", "unexpected"}},
	{text: `CREATE TABLE shop.x (id int PRIMARY KEY) WITH comment = 1@@`, want: []string{"line 1:", "malformed number"}},
}

// TestLogLinesQuoteHostileInputBounded applies commands with the longest
// request ids and a 1 MB table name: no log line of the state machine
// quotes more than a cut of them.
func TestLogLinesQuoteHostileInputBounded(t *testing.T) {
	var buf bytes.Buffer
	sm, err := Open(Config{Dir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	id := func(c byte) string { return strings.Repeat(string(c), MaxRequestIDBytes) }
	long := strings.Repeat("n", 1<<20)
	g := guardrails.Defaults()
	g.TablesWarnThreshold = 0
	res := a.apply(
		Command{RequestID: id('a'), Text: ksDDL},
		Command{RequestID: id('b'), Text: "CREATE TABLE shop." + long + " (id int PRIMARY KEY)"},
		Command{RequestID: id('c'), Kind: KindSetGuardrails, Guardrails: guardrails.AppendSettings(nil, g)},
		Command{RequestID: id('d'), Text: "CREATE TABLE shop.t (id int PRIMARY KEY)"},
	)
	if res[0].Err != nil || res[1].Err == nil || res[2].Err != nil || res[3].Err != nil || len(res[3].Outcome.Warnings) == 0 {
		t.Fatalf("results: %+v", res)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) < 3 {
		t.Fatalf("only %d log lines:\n%.2000s", len(lines), buf.String())
	}
	for _, line := range lines {
		if len(line) > maxErrorBytes || strings.Contains(line, long[:clip.Max+1]) || strings.Contains(line, id('b')[:clip.Max+1]) {
			t.Errorf("log line of %d bytes: %.400s", len(line), line)
		}
	}
}

// TestLongRequestIDRefused checks that a command with a 1 MB request id
// is refused with a short error naming the cut id, applies nothing and
// is not remembered (schema.db could not store the key), and that a new
// request with an id over MaxRequestIDBytes is refused by Precheck while
// the state machine still applies one (as it did before the bound).
func TestLongRequestIDRefused(t *testing.T) {
	sm := openSM(t, t.TempDir())
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	long := strings.Repeat("r", 1<<20)
	for _, cmd := range []Command{{RequestID: long, Text: ksDDL}, {RequestID: long, Kind: KindSetGuardrails, Guardrails: guardrails.AppendSettings(nil, guardrails.Defaults())}} {
		res := a.apply(cmd)
		err := res[0].Err
		if !errors.Is(err, ErrRequestIDTooLong) || !errors.Is(err, schema.ErrInvalid) || len(err.Error()) > 1024 ||
			!strings.Contains(err.Error(), "(1048576 bytes) is longer than 32768 bytes") || len(res[0].Outcome.Results) != 0 {
			t.Fatalf("result %.400v", res[0])
		}
	}
	if m := sm.Current(); m.Epoch != 0 || m.Requests.Len() != 0 || m.Index != a.index {
		t.Fatalf("epoch %d, %d requests, index %d", m.Epoch, m.Requests.Len(), m.Index)
	}
	stmts, err := cql.Parse(ksDDL)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{MaxRequestIDBytes + 1, 32768} {
		cmd := Command{RequestID: strings.Repeat("s", n), Text: ksDDL}
		err := sm.Current().Precheck(cmd, stmts)
		if !errors.Is(err, ErrRequestIDTooLong) || !strings.Contains(err.Error(), "is longer than 256 bytes") {
			t.Errorf("Precheck of an id of %d bytes: %.300v", n, err)
		}
	}
	if r := a.apply(Command{RequestID: strings.Repeat("s", 32768), Text: ksDDL}); r[0].Err != nil || sm.Current().Requests.Len() != 1 {
		t.Fatalf("an id of 32768 bytes: %v", r[0].Err)
	}
	if err := sm.Current().Precheck(Command{RequestID: strings.Repeat("s", MaxRequestIDBytes), Text: "CREATE TABLE shop.t (id int PRIMARY KEY)"}, nil); !errors.Is(err, ErrEmptyCommand) {
		t.Fatalf("Precheck of an id of %d bytes: %v", MaxRequestIDBytes, err)
	}
}
