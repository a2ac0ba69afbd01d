package metadata

import (
	"errors"
	"strings"
	"testing"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// TestUnprintableRequestIDRefused: a new request whose id holds a control
// or bidirectional formatting character is refused before it is proposed,
// with InvalidArgument's schema.ErrInvalid and the byte offset, and
// nothing applies; a command logged with such an id before the rule
// still applies (the state machine does not check it).
func TestUnprintableRequestIDRefused(t *testing.T) {
	sm := openSM(t, t.TempDir())
	defer sm.Close()
	stmts, err := cql.Parse(ksDDL)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id, want string
	}{
		{"r1\x1b[2K\rtoken:admin DROP KEYSPACE other", `request id "r1\x1b[2K\rtoken:admin DROP KEYSPACE other" holds a control character (U+001B) at byte offset 2`},
		{"ok\rforged", "holds a control character (U+000D) at byte offset 2"},
		{"bell\a", "holds a control character (U+0007) at byte offset 4"},
		{"new\nline", "holds a control character (U+000A) at byte offset 3"},
		{"c1\u009b", "holds a control character (U+009B) at byte offset 2"},
		{"é\u202eabc", `request id "é\u202eabc" holds a bidirectional formatting character (U+202E) at byte offset 2`},
		{"iso\u2066", "holds a bidirectional formatting character (U+2066) at byte offset 3"},
		{"bad\xff", "holds a byte that is not UTF-8 (0xff) at byte offset 3"},
	} {
		err := sm.Current().Precheck(Command{RequestID: tc.id, Text: ksDDL}, stmts)
		if !errors.Is(err, ErrRequestIDUnprintable) || !errors.Is(err, schema.ErrInvalid) ||
			!strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was applied") {
			t.Errorf("Precheck of request id %q: %v, want an error saying %q", tc.id, err, tc.want)
		}
		if _, _, err := sm.Current().DryRun(Command{RequestID: tc.id, Text: ksDDL}, stmts); !errors.Is(err, ErrRequestIDUnprintable) {
			t.Errorf("DryRun of request id %q: %v, want ErrRequestIDUnprintable", tc.id, err)
		}
	}
	for _, id := range []string{"7d1e0c9a-3b7f-4c1e-9a52-0f6b1d2e3c4a", "ci:build 42/naïve-名前", ""} {
		if err := CheckRequestID(id); err != nil {
			t.Errorf("CheckRequestID(%q): %v", id, err)
		}
	}
	a := &applier{t: t, sm: sm}
	if r := a.apply(Command{RequestID: "logged\x1b[2J", Text: ksDDL}); r[0].Err != nil || sm.Current().Epoch != 1 {
		t.Fatalf("a logged command with a control character in its id: %v, epoch %d", r[0].Err, sm.Current().Epoch)
	}
}

// TestQuotedNameWithBidiRefused: a new request whose second statement
// names a column with a right-to-left override is refused before it is
// proposed, whole, with the statement, the line and column of the name,
// and schema.ErrInvalid; the log's apply of the same text (an entry
// written before the rule) still applies it.
func TestQuotedNameWithBidiRefused(t *testing.T) {
	sm := openSM(t, t.TempDir())
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	if r := a.apply(Command{Text: ksDDL}); r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	text := "CREATE TABLE shop.a (id int PRIMARY KEY);\nCREATE TABLE shop.t (id int PRIMARY KEY, \"total\u202e\" int)"
	stmts, err := cql.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	err = sm.Current().Precheck(Command{Text: text}, stmts)
	want := `statement 2 of 2: line 2:42: CREATE TABLE shop.t: column name "total\u202e" contains a bidirectional formatting character (U+202E)`
	var ne *cql.NameError
	if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, schema.ErrInvalid) || !errors.As(err, &ne) {
		t.Fatalf("Precheck: %v, want %s...", err, want)
	}
	if r := a.apply(Command{Text: text}); r[0].Err != nil || sm.Current().Epoch != 3 {
		t.Fatalf("the log's apply of an entry written before the rule: %v, epoch %d", r[0].Err, sm.Current().Epoch)
	}
}
