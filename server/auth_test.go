package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/metalog/metalog/access"
	"github.com/metalog/metalog/api"
	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/internal/testkit"
)

func TestParseTokenFile(t *testing.T) {
	h := api.HashToken("s3cret")
	for _, tc := range []struct {
		name, file, err string
	}{
		{"ok", "# comment\n\nalice " + h + " reader,ddl\n", ""},
		{"fields", "alice " + h + "\n", "want \"name sha256hex role,role\""},
		{"hash", "alice s3cret reader\n", "64 hex digits"},
		{"role", "alice " + h + " admin\n", `unknown role "admin"`},
		{"dup", "a " + h + " reader\nb " + h + " ddl\n", "tokens:2 (b): the same token hash is listed twice"},
		{"comma", "# x\na,b " + h + " reader\n", `tokens:2: token name: bad name: "a,b" has ',' at byte 2`},
		{"equals", "bad=name " + h + " reader\n", `tokens:1: token name: bad name: "bad=name" has '=' at byte 4`},
		{"control", "bad\x01 " + h + " reader\n", `tokens:1: token name: bad name: "bad\x01" has '\x01' at byte 4`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseTokenFile("tokens", []byte(tc.file))
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if e := got[sha256Of("s3cret")]; e.name != "alice" || len(e.grants) != 2 {
					t.Fatalf("got %+v", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, errAuthFile) {
				t.Fatalf("err %v, want one containing %q", err, tc.err)
			}
		})
	}
}

func sha256Of(tok string) (k [32]byte) {
	h := api.HashToken(tok)
	for i := range k {
		fmt.Sscanf(h[2*i:2*i+2], "%02x", &k[i])
	}
	return k
}

// authFiles are the files of a server with client TLS, a client CA and
// tokens: dir holds ca.crt, srv.crt, srv.key and tokens (a reader and an
// operator token, r-token and o-token).
type authFiles struct {
	dir string
	ca  *testkit.CA
	// appChain is a client certificate of the CA for CN app, in the form
	// the gateway forwards it (base64 DER, comma separated).
	appChain string
}

func newAuthFiles(t *testing.T) *authFiles {
	ca := testkit.NewCA(t, "clients")
	dir := ca.Dir // ca.crt is there
	ca.IssueFiles(t, "srv", "server")
	testkit.WriteFile(t, filepath.Join(dir, "tokens"), []byte("reader "+api.HashToken("r-token")+" reader\nops "+api.HashToken("o-token")+" operator,reader\n"))
	b, _ := pem.Decode(ca.Issue(t, "app").CertPEM)
	return &authFiles{dir: dir, ca: ca, appChain: base64.StdEncoding.EncodeToString(b.Bytes)}
}

// TestServerTLSAuthEndToEnd starts a server with client TLS, a client CA
// and tokens, and checks gRPC and HTTP alike.
func TestServerTLSAuthEndToEnd(t *testing.T) {
	f := newAuthFiles(t)
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.GRPCAddr, cfg.HTTPAddr, cfg.PeerAddr, cfg.CQLAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0", ""
	cfg.ClientCertFile, cfg.ClientKeyFile = filepath.Join(f.dir, "srv.crt"), filepath.Join(f.dir, "srv.key")
	cfg.ClientCAFile, cfg.AuthTokenFile = filepath.Join(f.dir, "ca.crt"), filepath.Join(f.dir, "tokens")
	cfg.AuthCertRoles = "app=ddl,reader"
	cfg.InsecurePeer = true // a test of the client port
	srv, err := Start(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close(ctx)
	})
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(f.ca.PEM)
	appCert, appKey := f.ca.IssueFiles(t, "app", "app")
	pair, err := tls.LoadX509KeyPair(appCert, appKey)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// gRPC with the ddl certificate: wait for a leader, then execute.
	conn, err := grpc.NewClient(srv.GRPCAddr(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}})))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := pb.NewMetadataServiceClient(conn)
	for !srv.member.Readiness().Ready {
		select {
		case <-ctx.Done():
			t.Fatal("server not ready")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}); err != nil {
		t.Fatal(err)
	}

	// HTTP: the same rules.
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer hc.CloseIdleConnections()
	hcCert := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}}}
	defer hcCert.CloseIdleConnections()
	do := func(c *http.Client, method, path, token, body string, hdr ...string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, method, "https://"+srv.HTTPAddr()+path, strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := do(hc, "GET", "/v1/keyspaces/ks", "", ""); code != http.StatusUnauthorized {
		t.Fatalf("no credentials: %d %s", code, body)
	}
	if code, body := do(hc, "GET", "/v1/keyspaces/ks", "r-token", ""); code != http.StatusOK {
		t.Fatalf("reader token: %d %s", code, body)
	}
	if code, body := do(hc, "POST", "/v1/execute", "r-token", `{"statements":"DROP KEYSPACE ks"}`); code != http.StatusForbidden {
		t.Fatalf("reader token executes: %d %s", code, body)
	}
	if code, body := do(hcCert, "GET", "/v1/keyspaces/ks", "", ""); code != http.StatusOK {
		t.Fatalf("client certificate over HTTP: %d %s", code, body)
	}
	if code, body := do(hc, "GET", "/v1/keyspaces/ks", "", "", "Grpc-Metadata-X-Metalog-Gateway-Client-Cert", f.appChain); code != http.StatusUnauthorized {
		t.Fatalf("forged certificate header: %d %s", code, body)
	}
	if code, body := do(hc, "GET", "/healthz", "", ""); code != http.StatusOK {
		t.Fatalf("healthz: %d %s", code, body)
	}
	if _, err := c.GetKeyspace(ctx, &pb.GetKeyspaceRequest{Keyspace: "ks"}); err != nil {
		t.Fatalf("keyspace gone after refused drop: %v", err)
	}
}

func TestSecurityConfigValidation(t *testing.T) {
	base := func() Config {
		c := DefaultConfig()
		return c
	}
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		err  string
	}{
		{"defaults", func(*Config) {}, ""},
		{"public grpc without tls", func(c *Config) { c.GRPCAddr = "0.0.0.0:7070" }, "grpc_addr 0.0.0.0:7070 is not a loopback address"},
		{"empty host is public", func(c *Config) { c.HTTPAddr = ":7080" }, "http_addr :7080 is not a loopback address"},
		{"public grpc with --insecure", func(c *Config) { c.GRPCAddr, c.Insecure = "0.0.0.0:7070", true }, ""},
		{"public grpc with tls and tokens", func(c *Config) {
			c.GRPCAddr, c.ClientCertFile, c.ClientKeyFile, c.AuthTokenFile = "10.0.0.1:7070", "c", "k", "t"
			c.PeerCertFile, c.PeerKeyFile, c.PeerCAFile = "c", "k", "ca"
		}, ""},
		{"tokens without peer tls", func(c *Config) { c.AuthTokenFile = "t" }, "authentication is on, but the peer port has no mutual TLS (peer_addr 127.0.0.1:7071)"},
		{"client ca without peer tls", func(c *Config) {
			c.ClientCertFile, c.ClientKeyFile, c.ClientCAFile = "c", "k", "ca"
		}, "--insecure-peer (insecure_peer: true)"},
		{"tokens with --insecure-peer", func(c *Config) { c.AuthTokenFile, c.InsecurePeer = "t", true }, ""},
		{"tokens with --insecure only", func(c *Config) { c.AuthTokenFile, c.Insecure = "t", true }, "the peer port has no mutual TLS"},
		{"public grpc with tls but no auth", func(c *Config) { c.GRPCAddr, c.ClientCertFile, c.ClientKeyFile = "10.0.0.1:7070", "c", "k" }, "no TLS and authentication"},
		{"public peer without mtls", func(c *Config) { c.PeerAddr, c.InitialCluster = "10.0.0.1:7071", "" }, "peer_addr 10.0.0.1:7071 is not a loopback address"},
		{"public peer with mtls", func(c *Config) {
			c.PeerAddr, c.PeerCertFile, c.PeerKeyFile, c.PeerCAFile = "10.0.0.1:7071", "c", "k", "ca"
		}, ""},
		{"localhost", func(c *Config) { c.GRPCAddr = "localhost:7070" }, ""},
		{"half a key pair", func(c *Config) { c.ClientCertFile = "c" }, "client_cert_file and client_key_file go together"},
		{"partial peer tls", func(c *Config) { c.PeerCertFile, c.PeerKeyFile = "c", "k" }, "set all three"},
		{"client ca without tls", func(c *Config) { c.ClientCAFile = "ca" }, "client_ca_file needs client_cert_file"},
		{"cert roles without ca", func(c *Config) { c.AuthCertRoles = "app=ddl" }, "auth_cert_roles needs client_ca_file"},
		{"bad cert role", func(c *Config) {
			c.ClientCertFile, c.ClientKeyFile, c.ClientCAFile, c.AuthCertRoles = "c", "k", "ca", "app=root"
		}, `unknown role "root"`},
		{"tiny request limit", func(c *Config) { c.MaxRequestBytes = 10 }, "max_request_bytes must be at least 4096"},
		{"no statements", func(c *Config) { c.MaxStatementsPerRequest = 0 }, "max_statements_per_request"},
		{"no concurrency", func(c *Config) { c.MaxConcurrentRequestsPerConnection = 0 }, "max_concurrent_requests_per_connection"},
		{"pprof on loopback without auth", func(c *Config) { c.EnablePprof = true }, ""},
		{"pprof off loopback without auth", func(c *Config) { c.EnablePprof, c.Insecure, c.HTTPAddr = true, true, "0.0.0.0:7080" },
			"enable_pprof (--enable-pprof) would serve /debug/pprof/ on http_addr 0.0.0.0:7080, which is not a loopback address, to anyone who reaches it, without authentication"},
		{"pprof off loopback with auth", func(c *Config) {
			c.EnablePprof, c.HTTPAddr, c.ClientCertFile, c.ClientKeyFile, c.AuthTokenFile = true, "10.0.0.1:7080", "c", "k", "t"
			c.InsecurePeer = true
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.mod(&c)
			err := c.validate()
			if tc.err == "" && err != nil {
				t.Fatal(err)
			}
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("err %v, want one containing %q", err, tc.err)
			}
		})
	}
}

func TestCertRolesFromYAML(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.yaml")
	testkit.WriteFile(t, path, []byte("auth_cert_roles:\n  viewer: [reader]\n  app: [ddl, reader]\nmax_statements_per_request: 7\n"))
	c := DefaultConfig()
	if err := c.LoadConfigFile(path); err != nil {
		t.Fatal(err)
	}
	if c.AuthCertRoles != "app=ddl,reader;viewer=reader" || c.MaxStatementsPerRequest != 7 {
		t.Fatalf("got %q %d", c.AuthCertRoles, c.MaxStatementsPerRequest)
	}
	m, err := c.AuthCertRoles.Map()
	if err != nil || len(m["app"]) != 2 || m["viewer"][0] != (access.Grant{Role: api.RoleReader}) {
		t.Fatalf("map %v %v", m, err)
	}
}

// TestTokenFileReloadKeepsTokensOnBadName: a token file that gains a line
// with a bad name is refused on reload, naming file:line and why, and the
// tokens loaded before stay in use; at start the same file is refused.
func TestTokenFileReloadKeepsTokensOnBadName(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	good := "alice " + api.HashToken("alice-token") + " reader\n"
	if err := os.WriteFile(file, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	ts, err := newTokenStore(file)
	if err != nil {
		t.Fatal(err)
	}
	bad := good + "ops,admin " + api.HashToken("ops-token") + " operator\n"
	if err := os.WriteFile(file, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	want := file + `:2: token name: bad name: "ops,admin" has ',' at byte 4`
	if err := ts.Reload(); err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, errAuthFile) {
		t.Fatalf("reload of a bad name: %v, want an error containing %q", err, want)
	}
	if e, ok := ts.lookup("alice-token"); !ok || e.name != "alice" {
		t.Fatalf("after the refused reload alice's token is %+v, %v; want it still in use", e, ok)
	}
	if _, ok := ts.lookup("ops-token"); ok {
		t.Fatal("the refused line's token was taken")
	}
	if _, err := newTokenStore(file); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("loading the bad file at start: %v, want %q", err, want)
	}
}

// TestTokenFileOpenToOthersIsRefused: a token file others may read or
// write is refused at start, and on a reload (SIGHUP, or the file
// changing, as when another user appends a line) the tokens loaded
// before stay in use and the appended one is not taken, until the mode is
// fixed.
func TestTokenFileOpenToOthersIsRefused(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	good := "alice " + api.HashToken("alice-token") + " reader\n"
	testkit.WriteFile(t, file, []byte(good))
	os.Chmod(file, 0o666)
	want := "auth_token_file " + file + " has mode 0666: its group and all other users may read and write it"
	if _, err := newTokenStore(file); !errors.Is(err, errFileMode) || !strings.Contains(err.Error(), want) {
		t.Fatalf("start with a token file of mode 0666: %v, want %q", err, want)
	}
	os.Chmod(file, 0o600)
	ts, err := newTokenStore(file)
	if err != nil {
		t.Fatal(err)
	}
	var reported []error
	ts.onError = func(err error) { reported = append(reported, err) }
	os.Chmod(file, 0o666)
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("mallory " + api.HashToken("mallory-token") + " operator\n")
	f.Close()
	touch(t, file)
	if err := ts.Reload(); !errors.Is(err, errFileMode) || !strings.Contains(err.Error(), want) {
		t.Fatalf("reload of a token file of mode 0666: %v", err)
	}
	ts.mu.Lock()
	ts.lastCheck = time.Time{}
	ts.mu.Unlock()
	if _, ok := ts.lookup("mallory-token"); ok || len(reported) != 1 || !errors.Is(reported[0], errFileMode) {
		t.Fatalf("the appended token was taken (%v), or the change was not reported: %v", ok, reported)
	}
	if e, ok := ts.lookup("alice-token"); !ok || e.name != "alice" {
		t.Fatalf("alice's token after the refused reload: %+v, %v", e, ok)
	}
}
