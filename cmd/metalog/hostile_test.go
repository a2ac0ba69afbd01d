package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/internal/safetext"
	"github.com/metalog/metalog/internal/testkit"
)

// Hostile text as a ddl@shop token could store it: a request id that
// erases the line history prints and draws a forged one, a table comment
// that clears the screen, and a right-to-left override.
const (
	hostileID      = "r1\x1b[2K\rtoken:admin  DROP KEYSPACE other\a\u202e"
	hostileComment = "orders\x1b[2J\x1b[H\r\u202eevil"
)

// hostileEvent is a change whose every text field is hostile.
func hostileEvent() *pb.Event {
	return &pb.Event{Epoch: 7, Time: at(7), Principal: "token:ci\u202e", Role: "ddl@shop\r", RequestId: hostileID,
		Kind: "ALTER TABLE", Keyspace: "shop", Table: "orders", Name: "x\x1b[31m",
		Statement: "ALTER TABLE shop.orders\n  WITH comment = '" + hostileComment + "'"}
}

// hostileTable is DESCRIBE output with the hostile comment.
const hostileTable = "CREATE TABLE shop.orders (\n\tid int PRIMARY KEY\n) WITH comment = '" + hostileComment + "';\n"

// checkEscaped fails the test when out holds a rune a terminal obeys
// (new lines and tabs aside) or is not UTF-8.
func checkEscaped(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		if r != '\n' && r != '\t' && (safetext.Unsafe(r) || r == utf8.RuneError) {
			t.Errorf("%s printed %U at byte %d:\n%q", what, r, i, out)
			return
		}
	}
}

// TestHistoryShowsHostileTextEscaped: the request id, principal, role,
// name and statement of a change are printed escaped, the request id as
// one quoted field, every statement line indented; --json prints them
// exactly.
func TestHistoryShowsHostileTextEscaped(t *testing.T) {
	m := startMember(t, &fakeMember{events: []*pb.Event{hostileEvent()}, pageSize: 10})
	out, err := runErr(t, "history", "--endpoints", m.addr)
	if err != nil {
		t.Fatal(err)
	}
	checkEscaped(t, "history", out)
	want := `epoch 7  2026-12-01T10:07:00Z  "token:ci\u202e" ("ddl@shop\r")  ALTER TABLE shop."x\x1b[31m" ON orders  request "r1\x1b[2K\rtoken:admin  DROP KEYSPACE other\a\u202e"` + "\n" +
		"    ALTER TABLE shop.orders\n" +
		`      WITH comment = 'orders\x1b[2J\x1b[H\r\u202eevil'` + "\n"
	if out != want {
		t.Errorf("history printed:\n%q\nwant:\n%q", out, want)
	}
	out, err = runErr(t, "history", "--endpoints", m.addr, "--json")
	if err != nil {
		t.Fatal(err)
	}
	checkEscaped(t, "history --json", out)
	var got struct {
		Principal, Role, RequestID, Name, Statement string
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("history --json printed %q: %v", out, err)
	}
	ev := hostileEvent()
	if got.Principal != ev.Principal || got.Role != ev.Role || got.Name != ev.Name || got.Statement != ev.Statement {
		t.Errorf("history --json decodes to %+v, want the event's exact text", got)
	}
	var id struct {
		RequestID string `json:"request_id"`
	}
	if json.Unmarshal([]byte(out), &id); id.RequestID != hostileID {
		t.Errorf("history --json decodes to request id %q, want %q", id.RequestID, hostileID)
	}
}

// TestWatchShowsHostileTextEscaped: an event's line and a resync's CQL are
// printed escaped (the CQL after a comment saying so), and exactly with
// --json; the error the watch ends with is escaped too.
func TestWatchShowsHostileTextEscaped(t *testing.T) {
	script := []*pb.WatchResponse{
		{Type: "events", Epoch: 7, Events: []*pb.Event{hostileEvent()}},
		{Type: "resync", Epoch: 8, Cql: hostileTable},
	}
	m := startMember(t, &fakeMember{watch: script, watchEnd: status.Error(codes.PermissionDenied, "token "+hostileID+" revoked")})
	out, err := runErr(t, "watch", "--endpoints", m.addr)
	checkEscaped(t, "watch", out)
	for _, want := range []string{
		`epoch 7  2026-12-01T10:07:00Z  "token:ci\u202e" ("ddl@shop\r")  ALTER TABLE shop."x\x1b[31m" ON orders` + "\n",
		"\n-- metalog: control or bidirectional formatting characters in this text are shown escaped",
		"\tid int PRIMARY KEY\n) WITH comment = 'orders\\x1b[2J\\x1b[H\\r\\u202eevil';\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("watch printed:\n%q\nwant a part %q", out, want)
		}
	}
	wantErr := `PermissionDenied: token r1\x1b[2K\rtoken:admin  DROP KEYSPACE other\a\u202e revoked (the watch got to epoch 8: go on with --from-epoch 8)`
	if err == nil || err.Error() != wantErr {
		t.Errorf("watch ended with %v, want %s", err, wantErr)
	}
	out, _ = runErr(t, "watch", "--endpoints", m.addr, "--json")
	checkEscaped(t, "watch --json", out)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("watch --json printed %d lines, want 2:\n%q", len(lines), out)
	}
	var resync pb.WatchResponse
	if err := protojson.Unmarshal([]byte(lines[1]), &resync); err != nil || resync.Cql != hostileTable {
		t.Errorf("watch --json resync decodes to %q, %v; want the exact CQL", resync.Cql, err)
	}
	var first struct {
		Events []struct {
			RequestID string `json:"request_id"`
			Statement string
		}
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || len(first.Events) != 1 ||
		first.Events[0].RequestID != hostileID || first.Events[0].Statement != hostileEvent().Statement {
		t.Errorf("watch --json events decode to %+v, %v; want the exact text", first, err)
	}
}

// TestDescribeShowsHostileTextEscaped: a comment that would clear the
// screen is printed escaped, after a CQL comment saying so; --raw prints
// it as stored.
func TestDescribeShowsHostileTextEscaped(t *testing.T) {
	m := startMember(t, &fakeMember{describe: hostileTable})
	out, err := runErr(t, "describe", "--endpoints", m.addr, "shop.orders")
	if err != nil {
		t.Fatal(err)
	}
	checkEscaped(t, "describe", out)
	want := "-- metalog: control or bidirectional formatting characters in this text are shown escaped (\\x1b, \\u202e): it does not re-create them; describe --raw prints the text as stored\n" +
		"CREATE TABLE shop.orders (\n\tid int PRIMARY KEY\n) WITH comment = 'orders\\x1b[2J\\x1b[H\\r\\u202eevil';\n"
	if out != want {
		t.Errorf("describe printed:\n%q\nwant:\n%q", out, want)
	}
	if out, err = runErr(t, "describe", "--endpoints", m.addr, "--raw", "shop.orders"); err != nil || out != hostileTable {
		t.Errorf("describe --raw: %q, %v; want the stored text %q", out, err, hostileTable)
	}
}

// TestErrorsShowHostileTextEscaped: a server's error quoting hostile text
// is printed escaped on one line, as main prints it; an error of several
// lines keeps its lines, each escaped.
func TestErrorsShowHostileTextEscaped(t *testing.T) {
	m := startMember(t, &fakeMember{tableErr: status.Error(codes.NotFound, "table shop.\"\x1b[2J\u202e\nmetalog: ok\" not found")})
	_, err := runErr(t, "describe", "--endpoints", m.addr, "shop.orders")
	if err == nil {
		t.Fatal("describe of a table not found: no error")
	}
	var printed bytes.Buffer
	printError(&printed, err)
	if want := `metalog: NotFound: table shop."\x1b[2J\u202e\nmetalog: ok" not found` + "\n"; printed.String() != want {
		t.Errorf("printed %q, want %q", printed.String(), want)
	}
	printed.Reset()
	printError(&printed, errors.New("local \x1b[2J\r\u202e\nsecond line"))
	checkEscaped(t, "printError", printed.String())
	if want := "metalog: local \\x1b[2J\\r\\u202e\nsecond line\n"; printed.String() != want {
		t.Errorf("printed %q, want %q", printed.String(), want)
	}
}

// TestOutcomeUnknownShowsTheRequestIDEscaped: an outcome-unknown error
// (an id the member remembers from before ids were checked, say) prints
// the request id as one quoted field in each command it suggests, and
// the member's message escaped.
func TestOutcomeUnknownShowsTheRequestIDEscaped(t *testing.T) {
	addr := startUnknownMember(t, &unknownMember{})
	id := "r1 \x1b[2K\u202e"
	_, err := runErr(t, "exec", "-e", "CREATE TABLE shop.t (id int PRIMARY KEY)", "--request-id", id, "--endpoints", addr, "--timeout", "300ms")
	if code := exitCode(err); code != 3 {
		t.Fatalf("exit code %d (%v), want 3", code, err)
	}
	var printed bytes.Buffer
	printError(&printed, err)
	checkEscaped(t, "an outcome-unknown error", printed.String())
	quoted := `"r1 \x1b[2K\u202e"`
	for _, want := range []string{
		`metalog: DeadlineExceeded: request r1 \x1b[2K\u202e: outcome unknown`,
		"request id " + quoted + "\nlearn what happened: metalog request " + quoted + " --after-index 41",
		"--request-id " + quoted + " (it applies at most once)",
	} {
		if !strings.Contains(printed.String(), want) {
			t.Errorf("printed:\n%q\nwant a part %q", printed.String(), want)
		}
	}
}

// tableMember answers exec, cluster status and guardrails get with text
// that holds a tab, a new line, ESC and U+202E in every text field.
type tableMember struct {
	pb.UnimplementedMetadataServiceServer
}

// hostileCell is a table cell that would shift the columns (tab), start a
// row (new line), rewrite the screen (ESC) and reorder the line (U+202E).
const hostileCell = "a\tb\nc\x1b[2J\u202ed"

func (tableMember) Execute(context.Context, *pb.ExecuteRequest) (*pb.ExecuteResponse, error) {
	return &pb.ExecuteResponse{Epoch: 3, Results: []*pb.StatementResult{{Kind: "CREATE TYPE", Keyspace: "shop", Name: hostileCell, Applied: true, Epoch: 3}},
		Warnings: []string{"warn " + hostileCell}}, nil
}

func (tableMember) ListMembers(context.Context, *pb.ListMembersRequest) (*pb.ListMembersResponse, error) {
	return &pb.ListMembersResponse{Members: []*pb.Member{
		{Id: "1", Name: "n1", PeerAddr: "127.0.0.1:1", GrpcAddr: "127.0.0.1:2", Role: "voter", Reachable: true, Error: hostileCell},
		{Id: "2", Name: "n2", PeerAddr: "127.0.0.1:3", Role: "voter", Error: hostileCell},
	}}, nil
}

func (tableMember) GetGuardrails(context.Context, *pb.GetGuardrailsRequest) (*pb.GetGuardrailsResponse, error) {
	return &pb.GetGuardrailsResponse{Epoch: 3, Guardrails: []*pb.GuardrailValue{{Name: "tables_warn_threshold", Value: "5", Default: "-1", Source: hostileCell}},
		Overrides: []*pb.KeyspaceGuardrailOverride{{Scope: "shop", Set: map[string]string{"tables_warn_threshold": hostileCell}}}}, nil
}

// TestTablesShowHostileTextEscaped: exec's results and warnings, cluster
// status and guardrails get print a cell's tab, new line, ESC and U+202E
// escaped, each row on one line.
func TestTablesShowHostileTextEscaped(t *testing.T) {
	addr := testkit.Serve(t, tableMember{})
	escaped := `a\tb\nc\x1b[2J\u202ed`
	for _, tc := range []struct {
		args  []string
		lines int // rows printed
	}{
		{[]string{"exec", "-e", "CREATE TYPE shop.x (a int)"}, 3},
		{[]string{"cluster", "status"}, 3},
		{[]string{"guardrails", "get"}, 5},
	} {
		out, _ := runErr(t, append(tc.args, "--endpoints", addr)...)
		checkEscaped(t, tc.args[0], strings.ReplaceAll(out, "\t", " "))
		if strings.Contains(out, "\t") || !strings.Contains(out, escaped) || strings.Count(out, "\n") != tc.lines {
			t.Errorf("%s printed %d lines, want %d, each cell escaped (%s):\n%q", tc.args[0], strings.Count(out, "\n"), tc.lines, escaped, out)
		}
	}
}

// TestPlanShowsHostileTextEscaped: a plan whose statement sets a hostile
// comment prints it escaped after the note, and its warnings on one line
// each.
func TestPlanShowsHostileTextEscaped(t *testing.T) {
	var out bytes.Buffer
	printPlan(&out, &pb.PlanResponse{Epoch: 4, Digest: "d",
		Statements: []string{"ALTER TABLE shop.orders WITH comment = '" + hostileComment + "'", "DROP TABLE shop.old"},
		Warnings:   []string{"DESTRUCTIVE: " + hostileCell}})
	checkEscaped(t, "plan", out.String())
	want := "-- plan at epoch 4: 2 statement(s), nothing is dropped; the schema it makes has digest d\n" +
		`-- warning: DESTRUCTIVE: a\tb\nc\x1b[2J\u202ed` + "\n" +
		"-- metalog: control or bidirectional formatting characters in this text are shown escaped (\\x1b, \\u202e): it does not re-create them; plan --json prints the text as stored\n" +
		`ALTER TABLE shop.orders WITH comment = 'orders\x1b[2J\x1b[H\r\u202eevil';` + "\nDROP TABLE shop.old;\n"
	if out.String() != want {
		t.Errorf("plan printed:\n%q\nwant:\n%q", out.String(), want)
	}
}
