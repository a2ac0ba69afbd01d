package cqlserver_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/metalog/metalog/api"
	"github.com/metalog/metalog/internal/testkit/serverkit"
	"github.com/metalog/metalog/server"
)

// authResult is what auth.py prints.
type authResult struct {
	Connected bool
	Error     string
	Keyspaces []string
	DDLErrors []*string `json:"ddl_errors"`
}

// TestPythonAuth: with authentication on, the Python driver connects
// with PlainTextAuthProvider and a metalog token as the password, and
// holds the token's roles: without credentials, or with a token the
// server does not know, it cannot connect; a reader@shop token sees shop
// (and Cassandra's own keyspaces) only, and its DDL is refused.
func TestPythonAuth(t *testing.T) {
	forProtocols(t, func(t *testing.T, proto int) {
		tokens := filepath.Join(t.TempDir(), "tokens")
		lines := "admin " + api.HashToken("admin-token") + " ddl,reader\nshopro " + api.HashToken("ro-token") + " reader@shop\n"
		if err := os.WriteFile(tokens, []byte(lines), 0o600); err != nil {
			t.Fatal(err)
		}
		s := serverkit.New(t, serverkit.WithCQL(), func(c *server.Config) { c.AuthTokenFile, c.InsecurePeer = tokens, true })
		run := func(ddl []string, creds ...string) authResult {
			var res authResult
			runPython(t, s.CQLAddr(), proto, "auth.py", map[string]any{"ddl": ddl}, &res, creds...)
			return res
		}
		if res := run(nil); res.Connected || !strings.Contains(res.Error, "requires authentication") {
			t.Errorf("no credentials: %+v, want refused", res)
		}
		if res := run(nil, "--username", "ci", "--password", "nope"); res.Connected || !strings.Contains(res.Error, "unknown token") {
			t.Errorf("unknown token: %+v, want refused", res)
		}
		admin := run([]string{
			`CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
			`CREATE KEYSPACE other WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		}, "--username", "ci", "--password", "admin-token")
		if !admin.Connected || slices.ContainsFunc(admin.DDLErrors, func(e *string) bool { return e != nil }) ||
			!slices.Contains(admin.Keyspaces, "other") {
			t.Fatalf("ddl,reader token: %+v", admin)
		}
		ro := run([]string{`CREATE TABLE shop.t (id int PRIMARY KEY)`}, "--username", "ci", "--password", "ro-token")
		if want := []string{"shop", "system", "system_schema"}; !ro.Connected || !slices.Equal(ro.Keyspaces, want) {
			t.Errorf("reader@shop token: %+v, want to see %v", ro, want)
		}
		if len(ro.DDLErrors) != 1 || ro.DDLErrors[0] == nil || !strings.Contains(*ro.DDLErrors[0], "Execute needs role ddl; token:shopro has roles reader@shop") {
			t.Errorf("DDL of a reader@shop token: %+v, want Unauthorized", ro.DDLErrors)
		}
	})
}
