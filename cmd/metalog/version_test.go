package main

import (
	"bytes"
	"regexp"
	"testing"
)

// run runs the root command with args and returns what it printed.
func run(t *testing.T, args ...string) string {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		t.Fatalf("metalog %q: %v", args, err)
	}
	return out.String()
}

func TestVersion(t *testing.T) {
	cmd, flag := run(t, "version"), run(t, "--version")
	if cmd != flag {
		t.Errorf("metalog version printed %q, metalog --version %q: want the same", cmd, flag)
	}
	if !regexp.MustCompile(`^metalog \S+ \(commit \S+, go\S+\)\n$`).MatchString(cmd) {
		t.Errorf("metalog version printed %q, want metalog VERSION (commit REVISION, GOVERSION)", cmd)
	}
}
