package integration

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/metalog/metalog/internal/safetext"
)

// hostileComment is a table comment as a ddl@shop token may write it:
// it clears the screen, returns to the line's start and reverses what
// follows. String constants keep any UTF-8, as in Cassandra.
const hostileComment = "x\x1b[2J\x1b[H\r\a\u202eevil"

// rawOnTerminal returns the first rune of out a terminal would obey (new
// lines and tabs aside), or "" when there is none.
func rawOnTerminal(out string) string {
	for _, r := range out {
		if r != '\n' && r != '\t' && (safetext.Unsafe(r) || r == utf8.RuneError) {
			return string(r)
		}
	}
	return ""
}

// TestHostileTextIsShownEscaped: on a real member, a request id or a
// quoted name holding control or bidirectional characters is refused
// (the request id with its byte offset, the name with its line and
// column) and the refusal is printed escaped; a comment holding them is
// stored as sent, and history and describe print it escaped, while
// history --json, watch --json and describe --raw give it exactly.
func TestHostileTextIsShownEscaped(t *testing.T) {
	s := newServer(t)
	s.start()
	if out, errOut, rc := s.cli("exec", "-e", createKS); rc != 0 {
		t.Fatalf("exec: rc=%d %s %s", rc, out, errOut)
	}

	id := "r1\x1b[2K\rtoken:admin DROP KEYSPACE other\u202e"
	out, errOut, rc := s.cli("exec", "--request-id", id, "-e", "CREATE TABLE ks.a (id int PRIMARY KEY)")
	want := `metalog: InvalidArgument: request id "r1\x1b[2K\rtoken:admin DROP KEYSPACE other\u202e" holds a control character (U+001B) at byte offset 2`
	if rc != 1 || !strings.HasPrefix(errOut, want) || rawOnTerminal(out+errOut) != "" {
		t.Errorf("exec with a hostile request id: rc=%d %q %q, want exit 1 and %q", rc, out, errOut, want)
	}
	out, errOut, rc = s.cli("exec", "-e", "CREATE TABLE ks.b (\n  id int PRIMARY KEY,\n  \"total\u202e\" int)")
	want = `metalog: InvalidArgument: line 3:3: CREATE TABLE ks.b: column name "total\u202e" contains a bidirectional formatting character (U+202E)`
	if rc != 1 || !strings.HasPrefix(errOut, want) || rawOnTerminal(out+errOut) != "" {
		t.Errorf("exec with a quoted name holding U+202E: rc=%d %q %q, want exit 1 and %q", rc, out, errOut, want)
	}
	if out, _, _ := s.cli("describe", "ks"); strings.Contains(out, "CREATE TABLE") {
		t.Errorf("a refused request applied something:\n%q", out)
	}

	// A watch from the start, before the comment is written.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	watch := exec.CommandContext(ctx, binary, "watch", "--from-epoch", "0", "--json", "--endpoints", s.grpcAddr)
	var watched syncBuffer
	watch.Stdout, watch.Stderr = &watched, &watched
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); watch.Wait() }()

	stmt := "CREATE TABLE ks.t (id int PRIMARY KEY) WITH comment = '" + hostileComment + "'"
	if out, errOut, rc := s.cli("exec", "--request-id", "req-1", "-e", stmt); rc != 0 {
		t.Fatalf("exec of a table with a hostile comment: rc=%d %q %q", rc, out, errOut)
	}
	escaped := `x\x1b[2J\x1b[H\r\a\u202eevil`

	out, errOut, rc = s.cli("history")
	if rc != 0 || rawOnTerminal(out) != "" || !strings.Contains(out, "    "+strings.ReplaceAll(stmt, hostileComment, escaped)+"\n") {
		t.Errorf("history: rc=%d %q %q, want the statement escaped", rc, out, errOut)
	}
	out, _, rc = s.cli("history", "--json")
	var last struct{ Statement string }
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); rc != 0 || err != nil || last.Statement != stmt || rawOnTerminal(out) != "" {
		t.Errorf("history --json: rc=%d %v, last statement %q; want exactly %q, escaped as JSON", rc, err, last.Statement, stmt)
	}

	out, _, rc = s.cli("describe", "ks.t")
	if rc != 0 || rawOnTerminal(out) != "" || !strings.HasPrefix(out, "-- metalog: control or bidirectional formatting characters in this text are shown escaped") ||
		!strings.Contains(out, "comment = '"+escaped+"'") {
		t.Errorf("describe ks.t: rc=%d %q, want the comment escaped after a note", rc, out)
	}
	out, _, rc = s.cli("describe", "ks.t", "--raw")
	if rc != 0 || !strings.Contains(out, "comment = '"+hostileComment+"'") {
		t.Errorf("describe --raw ks.t: rc=%d %q, want the comment as stored", rc, out)
	}

	waitFor(t, 20*time.Second, "the watch to print the table", func() error {
		if !strings.Contains(watched.String(), `"kind":"CREATE TABLE"`) {
			return errors.New("printed so far: " + watched.String())
		}
		return nil
	})
	if r := rawOnTerminal(watched.String()); r != "" {
		t.Errorf("watch --json printed %q raw:\n%q", r, watched.String())
	}
	var msg struct {
		Events []struct{ Kind, Statement string }
	}
	line := "" // the message of the table's change (progress messages may follow)
	for _, l := range strings.Split(watched.String(), "\n") {
		if strings.Contains(l, `"kind":"CREATE TABLE"`) {
			line = l
		}
	}
	// A message may carry several epochs: the keyspace's change too.
	got := ""
	err := json.Unmarshal([]byte(line), &msg)
	for _, ev := range msg.Events {
		if ev.Kind == "CREATE TABLE" {
			got = ev.Statement
		}
	}
	if err != nil || got != stmt {
		t.Errorf("watch --json's message of the change %q: %v; want the statement exactly", line, err)
	}
}
