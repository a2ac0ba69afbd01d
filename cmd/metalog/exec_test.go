package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStatementsFromRefusesTextNotUTF8(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.cql")
	if err := os.WriteFile(bad, []byte("CREATE KEYSPACE ks;\n-- caf\xe9\nCREATE TABLE ks.t (id int PRIMARY KEY)"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.cql")
	if err := os.WriteFile(good, []byte("-- café, ünïcödé\nCREATE KEYSPACE ks"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		text, file, stdin string
		err               string // "" for none
	}{
		{file: bad, err: bad + ": not UTF-8: invalid byte 0xe9 at byte offset 26 (line 2, byte 7 of the line); nothing was sent"},
		{file: "-", stdin: "\xff", err: "standard input: not UTF-8: invalid byte 0xff at byte offset 0 (line 1, byte 1 of the line)"},
		{text: "CREATE TABLE ks.\xc3(", err: "-e: not UTF-8: invalid byte 0xc3 at byte offset 16 (line 1, byte 17 of the line)"},
		{text: "CREATE TABLE ks.\"\xef\xbf\xbd\" (id int PRIMARY KEY)"}, // U+FFFD itself is valid
		{file: good},
		{file: "-", stdin: "CREATE KEYSPACE ks"},
	} {
		_, err := statementsFrom(tc.text, tc.file, strings.NewReader(tc.stdin))
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)) {
			t.Errorf("statementsFrom(%q, %q): %v, want %q", tc.text, tc.file, err, tc.err)
		}
	}
}
