package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/metalog/metalog/api"
)

// TestTokenNewRoles checks that token new prints the auth_token_file line
// with scoped roles as the server parses them, and refuses bad roles with
// the parse error, printing no token.
func TestTokenNewRoles(t *testing.T) {
	for _, tc := range []struct {
		roles, line, err string
	}{
		{roles: "ddl@shop,reader@shop", line: "ddl@shop,reader@shop"},
		{roles: "ddl@tenant_*, reader", line: "ddl@tenant_*,reader"},
		{roles: "ddl,ddl", line: "ddl"},
		{roles: "admin", err: `--roles "admin": unknown role "admin" (want reader, ddl or operator, optionally @keyspace or @prefix*)`},
		{roles: "ddl@shop.t", err: `--roles "ddl@shop.t": role "ddl@shop.t": scope "shop.t": character '.' at 5`},
		{roles: "ddl@", err: `scope "": want a keyspace name`},
		{roles: "", err: `unknown role ""`},
	} {
		root := newRootCmd()
		var out, errOut bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&errOut)
		root.SetArgs([]string{"token", "new", "--name", "ci", "--roles", tc.roles})
		err := root.Execute()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || out.Len() != 0 {
				t.Errorf("--roles %q: %v, printed %q; want error %q and no token", tc.roles, err, out.String(), tc.err)
			}
			continue
		}
		tok := strings.TrimSpace(out.String())
		if err != nil || tok == "" {
			t.Fatalf("--roles %q: %v", tc.roles, err)
		}
		if want := "# add to auth_token_file:\nci " + api.HashToken(tok) + " " + tc.line + "\n"; errOut.String() != want {
			t.Errorf("--roles %q: stderr %q, want %q", tc.roles, errOut.String(), want)
		}
	}
}

// TestTokenNewRefusesBadNames: token new checks --name as the server
// checks the token file, so that it never prints a line that would break
// every later reload; a refused name prints neither token nor line.
func TestTokenNewRefusesBadNames(t *testing.T) {
	for name, want := range map[string]string{
		"bad name": `--name: bad name: "bad name" has ' ' at byte 4`,
		"a,b":      `--name: bad name: "a,b" has ',' at byte 2`,
		"bad=name": `--name: bad name: "bad=name" has '=' at byte 4`,
		"#ops":     `--name: bad name: "#ops" starts with '#'`,
		"":         "--name: bad name: empty",
	} {
		root := newRootCmd()
		var out, errOut bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&errOut)
		root.SetArgs([]string{"token", "new", "--name", name, "--roles", "reader"})
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), want) || out.Len() != 0 || strings.Contains(errOut.String(), "auth_token_file") {
			t.Errorf("--name %q: %v, stdout %q, stderr %q; want error %q and nothing printed", name, err, out.String(), errOut.String(), want)
		}
	}
}
