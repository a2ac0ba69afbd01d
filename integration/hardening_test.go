package integration

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// httpsDo makes one request to the server's HTTPS listener with cfg's TLS
// (a client certificate in it authenticates) and a bearer token when not
// empty, and returns the status and the body.
func httpsDo(t *testing.T, s *server, cfg *tls.Config, method, path, token string) (int, string) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 20 * time.Second}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequest(method, "https://"+s.httpAddr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// logLine returns the first line of the server's log holding every part,
// "" when none does yet.
func (s *server) logLine(parts ...string) string {
	for line := range strings.Lines(s.stderr.String()) {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return line
		}
	}
	return ""
}

// waitLogLine waits until the server has logged a line holding every part
// and returns it.
func (s *server) waitLogLine(limit time.Duration, parts ...string) string {
	s.t.Helper()
	var line string
	waitFor(s.t, limit, "a log line with "+strings.Join(parts, " and "), func() error {
		if line = s.logLine(parts...); line == "" {
			return os.ErrNotExist
		}
		return nil
	})
	return line
}

// TestPprofNeedsTheOperatorRoleWithAuth: with authentication on,
// /debug/pprof/ answers 401 without credentials or with bad ones, 403 to
// a reader (token or certificate), and 200 to an operator; the start says
// so in a WARN.
func TestPprofNeedsTheOperatorRoleWithAuth(t *testing.T) {
	s, ca := securedServer(t, "--enable-pprof")
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/goroutine?debug=1"} {
		for _, tc := range []struct {
			name, cert, token string
			want              int
			body              string
		}{
			{"no credentials", "", "", http.StatusUnauthorized, "authentication required"},
			{"unknown token", "", "guess", http.StatusUnauthorized, "unknown token"},
			{"expired certificate", "expired", "", http.StatusUnauthorized, "expired"},
			{"reader token", "", "reader-token", http.StatusForbidden, "/debug/pprof/ needs role operator for every keyspace (the profiler shows the whole process); token:reader has roles reader"},
			{"ddl certificate", "app", "", http.StatusForbidden, "cert:app has roles ddl,reader"},
			{"operator token", "", "ops-token", http.StatusOK, ""},
		} {
			code, body := httpsDo(t, s, ca.tlsConfig(tc.cert), "GET", path, tc.token)
			if code != tc.want || !strings.Contains(body, tc.body) {
				t.Errorf("%s %s: %d %.300s, want %d with %q", path, tc.name, code, body, tc.want, tc.body)
			}
		}
	}
	if code, body := httpsDo(t, s, ca.tlsConfig(""), "GET", "/debug/pprof/cmdline", "ops-token"); code != http.StatusOK || !strings.Contains(body, "serve") {
		t.Errorf("the operator's cmdline: %d %q", code, body)
	}
	// 3 paths, each refused 3 times for credentials and twice for the role.
	_, metrics := httpsDo(t, s, ca.tlsConfig(""), "GET", "/metrics", "")
	for series, want := range map[string]float64{
		`metalog_requests_refused_total{reason="unauthenticated"}`:   9,
		`metalog_requests_refused_total{reason="permission_denied"}`: 6,
	} {
		if got, ok := metricValue(metrics, series); !ok || got != want {
			t.Errorf("%s = %v (%v), want %v", series, got, ok, want)
		}
	}
	s.waitLogLine(10*time.Second, "level=WARN", "pprof is on (enable_pprof): /debug/pprof/ on the HTTP listener answers callers with the operator role for every keyspace only")
}

// TestPprofWithoutAuthOnLoopback: with authentication off, the profiler
// is served on a loopback HTTP listener, with a WARN at start saying that
// every local user can reach it.
func TestPprofWithoutAuthOnLoopback(t *testing.T) {
	s := newServer(t)
	s.start("--enable-pprof")
	s.waitLogLine(10*time.Second, "level=WARN", "pprof is on (enable_pprof) without authentication: /debug/pprof/ on the loopback HTTP listener answers every user and process of this machine")
	if code, body := httpDo(t, "GET", "http://"+s.httpAddr+"/debug/pprof/", ""); code != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Fatalf("/debug/pprof/ on loopback without auth: %d %.200s", code, body)
	}
}

// TestPprofRefusedOffLoopbackWithoutAuth: serve refuses enable_pprof with
// authentication off on a non-loopback HTTP listener (which --insecure
// would otherwise allow), before it binds anything.
func TestPprofRefusedOffLoopbackWithoutAuth(t *testing.T) {
	serveRefused(t, "--enable-pprof off loopback without auth",
		"config: pprof refused: enable_pprof (--enable-pprof) would serve /debug/pprof/ on http_addr 0.0.0.0:0, which is not a loopback address",
		"--insecure", "--http-addr", "0.0.0.0:0", "--peer-addr", freeAddr(t), "--enable-pprof")
}

// TestMetricsNameNoIdentityByDefault: after a rate-limited request,
// /metrics counts it without an identity label and names no token;
// TestRateLimitPerIdentity shows the label with --metrics-identity-labels.
func TestMetricsNameNoIdentityByDefault(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("ddlshop "+tokenHash("ci-token")+" ddl,reader\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newServer(t)
	s.start("--auth-token-file", tokens, "--ddl-rate-per-identity", "0.01", "--ddl-burst-per-identity", "1", insecurePeerArg)
	conn, err := grpc.NewClient(s.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(loopbackToken("ci-token")))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := pb.NewMetadataServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: createKS}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.t (id int PRIMARY KEY)"}); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("second change: %v, want it rate limited", err)
	}
	code, metrics := httpDo(t, "GET", "http://"+s.httpAddr+"/metrics", "")
	if v, ok := metricValue(metrics, "metalog_ddl_rate_limited_total"); code != http.StatusOK || !ok || v != 1 {
		t.Fatalf("/metrics: %d, metalog_ddl_rate_limited_total = %v (%v), want 1 without labels", code, v, ok)
	}
	for line := range strings.Lines(metrics) {
		if strings.Contains(line, "identity=") || strings.Contains(line, "ddlshop") {
			t.Errorf("/metrics names an identity: %q", strings.TrimSpace(line))
		}
	}
}

// TestTLSListenersRefuseCBCAndOldVersions: the HTTP listener, like the
// gRPC one, refuses a TLS 1.2 handshake offering only CBC suites with a
// SHA-1 MAC, and TLS 1.1; both take TLS 1.2 with an AEAD suite.
func TestTLSListenersRefuseCBCAndOldVersions(t *testing.T) {
	s, ca := securedServer(t)
	dial := func(addr string, cfg *tls.Config) error {
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
		if err == nil {
			c.Close()
		}
		return err
	}
	for _, l := range []struct{ name, addr, alpn string }{{"HTTP", s.httpAddr, "http/1.1"}, {"gRPC", s.grpcAddr, "h2"}} {
		cbc := &tls.Config{RootCAs: ca.Pool(), NextProtos: []string{l.alpn}, MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
				tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA}}
		if err := dial(l.addr, cbc); err == nil {
			t.Errorf("%s listener: a TLS 1.2 handshake with CBC/SHA-1 suites only was accepted", l.name)
		}
		old := &tls.Config{RootCAs: ca.Pool(), NextProtos: []string{l.alpn}, MaxVersion: tls.VersionTLS11}
		if err := dial(l.addr, old); err == nil {
			t.Errorf("%s listener: a TLS 1.1 handshake was accepted", l.name)
		}
		gcm := &tls.Config{RootCAs: ca.Pool(), NextProtos: []string{l.alpn}, MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}}
		if err := dial(l.addr, gcm); err != nil {
			t.Errorf("%s listener: TLS 1.2 with ECDHE-ECDSA-AES128-GCM-SHA256: %v", l.name, err)
		}
	}
}

// serverCN is the common name of the certificate the listener at addr
// presents.
func serverCN(t *testing.T, addr string, ca *pki) string {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{RootCAs: ca.Pool(), NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].Subject.CommonName
}

// TestCertificateOutsideItsValidityIsRefused: an expired server
// certificate is refused at start (client and peer), and on reload
// (SIGHUP, or the files changing) with an ERROR naming the file and the
// validity period while the previous certificate stays in use; one not
// valid yet is refused likewise, then taken once it is valid.
func TestCertificateOutsideItsValidityIsRefused(t *testing.T) {
	past := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
	period := "valid from " + past.UTC().Format(time.RFC3339) + " to " + past.Add(24*time.Hour).UTC().Format(time.RFC3339)
	pre := newPKI(t, "start")
	crt, key := pre.issue("old", "metalog-server", past, past.Add(24*time.Hour))
	tokens := filepath.Join(pre.dir, "tokens")
	if err := os.WriteFile(tokens, []byte("ops "+tokenHash("ops-token")+" operator\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	serveRefused(t, "an expired client certificate", "certificate expired: client_cert_file "+crt+` (subject "CN=metalog-server") is `+period,
		"--client-cert-file", crt, "--client-key-file", key, "--auth-token-file", tokens, "--peer-addr", freeAddr(t), insecurePeerArg)
	serveRefused(t, "an expired peer certificate", "certificate expired: peer_cert_file "+crt,
		"--peer-cert-file", crt, "--peer-key-file", key, "--peer-ca-file", pre.caFile, "--peer-addr", freeAddr(t))

	s, ca := securedServer(t)
	certFile := filepath.Join(ca.dir, "server.crt")
	ca.issue("server", "metalog-server-expired", past, past.Add(24*time.Hour))
	s.cmd.Process.Signal(syscall.SIGHUP)
	line := s.waitLogLine(10*time.Second, "level=ERROR", "certificate expired: client_cert_file "+certFile, period)
	for _, addr := range []string{s.grpcAddr, s.httpAddr} {
		if cn := serverCN(t, addr, ca); cn != "metalog-server" {
			t.Fatalf("after the refused reload %s presents %q, want the previous metalog-server (log: %s)", addr, cn, line)
		}
	}

	soon := time.Now().Add(5 * time.Second)
	ca.issue("server", "metalog-server-soon", soon, soon.Add(time.Hour))
	s.cmd.Process.Signal(syscall.SIGHUP)
	s.waitLogLine(10*time.Second, "level=ERROR", "certificate not yet valid: client_cert_file "+certFile)
	waitFor(t, 30*time.Second, "the certificate to be taken once valid", func() error {
		if cn := serverCN(t, s.grpcAddr, ca); cn != "metalog-server-soon" {
			return os.ErrNotExist
		}
		return nil
	})
}

// TestFilesOpenToOthersAreRefused: a token file of mode 0666, a key of
// mode 0644 and a CA file of mode 0666 stop the start with the path and
// the mode; a token file made writable by all and appended to is refused
// on reload with an ERROR (path and mode), the appended token is refused
// and the tokens loaded before still work; a CA file readable by all is
// fine.
func TestFilesOpenToOthersAreRefused(t *testing.T) {
	pre := newPKI(t, "start")
	crt, key := pre.issue("srv", "metalog-server", time.Time{}, time.Time{})
	tokens := filepath.Join(pre.dir, "tokens")
	if err := os.WriteFile(tokens, []byte("ops "+tokenHash("ops-token")+" operator\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tlsArgs := []string{"--client-cert-file", crt, "--client-key-file", key, "--auth-token-file", tokens, "--peer-addr", freeAddr(t), insecurePeerArg}
	for _, tc := range []struct {
		what, file string
		mode       os.FileMode
		want       string
		args       []string
	}{
		{"a token file of mode 0666", tokens, 0o666, "auth_token_file " + tokens + " has mode 0666: its group and all other users may read and write it", tlsArgs},
		{"a key of mode 0644", key, 0o644, "client_key_file " + key + " has mode 0644: its group and all other users may read it", tlsArgs},
		{"a CA file of mode 0666", pre.caFile, 0o666, "client_ca_file " + pre.caFile + " has mode 0666: its group and all other users may write it",
			append([]string{"--client-ca-file", pre.caFile}, tlsArgs...)},
	} {
		if err := os.Chmod(tc.file, tc.mode); err != nil {
			t.Fatal(err)
		}
		serveRefused(t, tc.what, tc.want, tc.args...)
		os.Chmod(tc.file, 0o600)
	}

	s, ca := securedServer(t)
	if err := os.Chmod(ca.caFile, 0o644); err != nil {
		t.Fatal(err)
	}
	s.cmd.Process.Signal(syscall.SIGHUP)
	s.waitLog(10*time.Second, "SIGHUP: certificates and tokens reloaded")

	file := filepath.Join(ca.dir, "tokens")
	if err := os.Chmod(file, 0o666); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("mallory " + tokenHash("mallory-token") + " operator,reader\n")
	f.Close()
	s.cmd.Process.Signal(syscall.SIGHUP)
	s.waitLogLine(10*time.Second, "level=ERROR", "auth_token_file "+file+" has mode 0666")
	// The file changed since it was last read: a request makes the member
	// look at it (at most once a second) and refuse it again.
	waitFor(t, 10*time.Second, "the automatic pick-up to refuse the file", func() error {
		code, body := httpsDo(t, s, ca.tlsConfig(""), "GET", "/v1/schema", "mallory-token")
		if code != http.StatusUnauthorized {
			t.Fatalf("the token appended to a file of mode 0666: %d %s, want 401", code, body)
		}
		if s.logLine("level=ERROR", "reloading security material failed", "has mode 0666") == "" {
			return os.ErrNotExist
		}
		return nil
	})
	if code, body := httpsDo(t, s, ca.tlsConfig(""), "GET", "/v1/schema", "reader-token"); code != http.StatusOK {
		t.Fatalf("a token loaded before: %d %s", code, body)
	}
}

// TestScopedDryRunDigestIsTheCallersView: a dry run by ddl@shop,reader@shop
// answers the digest `describe` (GetSchema) gives that caller after the
// change, not the whole cluster's.
func TestScopedDryRunDigestIsTheCallersView(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("admin "+tokenHash("admin-token")+" ddl,reader\nshop "+tokenHash("shop-token")+" ddl@shop,reader@shop\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newServer(t)
	s.start("--auth-token-file", tokens, insecurePeerArg)
	as := func(token string) pb.MetadataServiceClient {
		conn, err := grpc.NewClient(s.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(loopbackToken(token)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return pb.NewMetadataServiceClient(conn)
	}
	admin, shop := as("admin-token"), as("shop-token")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};" +
		"CREATE KEYSPACE other WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; CREATE TABLE other.secret (id int PRIMARY KEY)"}); err != nil {
		t.Fatal(err)
	}
	change := &pb.ExecuteRequest{Statements: "CREATE TABLE shop.orders (id int PRIMARY KEY)"}
	dry, err := shop.Execute(ctx, &pb.ExecuteRequest{Statements: change.Statements, DryRun: true})
	if err != nil || !dry.DryRun {
		t.Fatalf("dry run: %v, %v", dry, err)
	}
	if _, err := shop.Execute(ctx, change); err != nil {
		t.Fatal(err)
	}
	scoped, err := shop.GetSchema(ctx, &pb.GetSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := admin.GetSchema(ctx, &pb.GetSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Digest != scoped.Digest || dry.Digest == whole.Digest {
		t.Fatalf("the scoped dry run's digest %s, the scoped GetSchema's %s, the whole cluster's %s: want the scoped GetSchema's", dry.Digest, scoped.Digest, whole.Digest)
	}
}
