package integration

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestScopedReadersSeeOnlyTheirKeyspaces: with tokens for reader@shop,
// reader@tenant_* and an unscoped reader, the CLI's describe, history and
// watch show a scoped reader only its keyspaces (and the cluster's own
// changes), as if the others did not exist; the unscoped reader sees all.
func TestScopedReadersSeeOnlyTheirKeyspaces(t *testing.T) {
	ca := newPKI(t, "clients")
	srvCert, srvKey := ca.issue("server", "metalog-server", time.Time{}, time.Time{})
	tokens := filepath.Join(ca.dir, "tokens")
	os.WriteFile(tokens, []byte("admin "+tokenHash("admin-token")+" ddl,operator,reader\n"+
		"all "+tokenHash("all-token")+" reader\n"+
		"shop "+tokenHash("shop-token")+" reader@shop\n"+
		"tenants "+tokenHash("tenant-token")+" reader@tenant_*\n"), 0o600)
	s := newServer(t)
	s.args = []string{"--client-cert-file", srvCert, "--client-key-file", srvKey, "--auth-token-file", tokens, insecurePeerArg}
	s.startAsync()
	s.waitReadyTLS(ca.tlsConfig(""))
	as := func(token string, args ...string) (string, string, int) {
		t.Helper()
		return s.cli(append(args, "--cacert", ca.caFile, "--token", token)...)
	}
	ks := func(name string) string {
		return "CREATE KEYSPACE " + name + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; CREATE TABLE " + name + ".t (id int PRIMARY KEY)"
	}
	for _, args := range [][]string{
		{"exec", "-e", ks("shop")},
		{"exec", "-e", ks("other")},
		{"exec", "-e", ks("tenant_a")},
		{"exec", "-e", ks("tenantb")},
		{"guardrails", "set", "tables_warn_threshold=50"},
	} {
		if out, errOut, rc := as("admin-token", args...); rc != 0 {
			t.Fatalf("%v: rc=%d %s %s", args, rc, out, errOut)
		}
	}

	// A watch from the first epoch, started before the last changes.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	watch := exec.CommandContext(ctx, binary, "watch", "--from-epoch", "0", "--endpoints", s.grpcAddr, "--cacert", ca.caFile, "--token", "shop-token")
	var watched syncBuffer
	watch.Stdout, watch.Stderr = &watched, &watched
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); watch.Wait() }()
	for _, stmt := range []string{"CREATE TABLE other.u (id int PRIMARY KEY)", "CREATE TABLE shop.u (id int PRIMARY KEY)"} {
		if out, errOut, rc := as("admin-token", "exec", "-e", stmt); rc != 0 {
			t.Fatalf("%s: rc=%d %s %s", stmt, rc, out, errOut)
		}
	}

	shopChanges := []string{"CREATE KEYSPACE shop", "CREATE TABLE shop.t", "SET GUARDRAILS", "CREATE TABLE shop.u"}
	invisible := []string{"other", "tenant"}
	checkLines := func(what, out string, want, not []string) {
		t.Helper()
		at := 0
		for _, w := range want {
			i := strings.Index(out[at:], w)
			if i < 0 {
				t.Fatalf("%s: %q missing or out of order in:\n%s", what, w, out)
			}
			at += i + len(w)
		}
		for _, n := range not {
			if strings.Contains(out, n) {
				t.Fatalf("%s shows %q:\n%s", what, n, out)
			}
		}
	}

	out, errOut, rc := as("shop-token", "describe")
	if rc != 0 {
		t.Fatalf("describe for reader@shop: rc=%d %s", rc, errOut)
	}
	checkLines("describe for reader@shop", out, []string{"CREATE KEYSPACE shop", "CREATE TABLE shop.t", "CREATE TABLE shop.u"}, invisible)
	_, otherErr, rc := as("shop-token", "describe", "other")
	_, missingErr, rc2 := as("shop-token", "describe", "nosuch")
	if rc == 0 || rc2 == 0 || !strings.Contains(otherErr, "does not exist") ||
		strings.ReplaceAll(otherErr, "other", "NAME") != strings.ReplaceAll(missingErr, "nosuch", "NAME") {
		t.Fatalf("describe other for reader@shop: rc=%d %q; a missing keyspace: rc=%d %q", rc, otherErr, rc2, missingErr)
	}
	if out, errOut, rc := as("shop-token", "describe", "--at-epoch", "4"); rc != 0 || strings.Contains(out, "other") || !strings.Contains(out, "CREATE TABLE shop.t") {
		t.Fatalf("describe --at-epoch 4 for reader@shop: rc=%d %s %s", rc, out, errOut)
	}

	out, errOut, rc = as("shop-token", "history")
	if rc != 0 {
		t.Fatalf("history for reader@shop: rc=%d %s", rc, errOut)
	}
	checkLines("history for reader@shop", out, shopChanges, invisible)

	waitFor(t, 20*time.Second, "the watch of reader@shop to print shop.u", func() error {
		if !strings.Contains(watched.String(), "CREATE TABLE shop.u") {
			return errors.New("not yet:\n" + watched.String())
		}
		return nil
	})
	checkLines("watch --from-epoch 0 for reader@shop", watched.String(), shopChanges, invisible)

	out, errOut, rc = as("tenant-token", "describe")
	if rc != 0 {
		t.Fatalf("describe for reader@tenant_*: rc=%d %s", rc, errOut)
	}
	checkLines("describe for reader@tenant_*", out, []string{"CREATE KEYSPACE tenant_a", "CREATE TABLE tenant_a.t"}, []string{"shop", "other", "tenantb"})
	out, _, _ = as("tenant-token", "history")
	checkLines("history for reader@tenant_*", out, []string{"CREATE KEYSPACE tenant_a", "CREATE TABLE tenant_a.t", "SET GUARDRAILS"}, []string{"shop", "other", "tenantb"})

	out, errOut, rc = as("all-token", "describe")
	if rc != 0 {
		t.Fatalf("describe for the unscoped reader: rc=%d %s", rc, errOut)
	}
	checkLines("describe for the unscoped reader", out, []string{"CREATE KEYSPACE other", "CREATE KEYSPACE shop", "CREATE KEYSPACE tenant_a", "CREATE KEYSPACE tenantb"}, nil)
	out, _, _ = as("all-token", "history")
	checkLines("history for the unscoped reader", out, []string{"CREATE KEYSPACE shop", "CREATE KEYSPACE other", "CREATE KEYSPACE tenant_a", "CREATE KEYSPACE tenantb", "SET GUARDRAILS", "CREATE TABLE other.u", "CREATE TABLE shop.u"}, nil)
}
