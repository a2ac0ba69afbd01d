package integration

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// peerTLSWarn starts the WARN line of a failed peer TLS handshake.
const peerTLSWarn = `level=WARN msg="peer TLS handshake failed`

// countLines counts the lines of log that hold every one of parts.
func countLines(log string, parts ...string) int {
	n := 0
	for _, line := range strings.Split(log, "\n") {
		all := line != ""
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			n++
		}
	}
	return n
}

// readyz returns the status code and body of the server's /readyz.
func (s *server) readyz() (int, string, error) {
	resp, err := http.Get("http://" + s.httpAddr + "/readyz")
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestPeerTLSMismatchIsLoud: a member started with --join and a peer
// certificate of another CA than the cluster's cannot be reached; both
// sides say why in a WARN line with the reason and the peer's address,
// once for many failed attempts; the joiner's /readyz says which
// handshake failed and why, and `cluster status` shows the reason in the
// joiner's ERROR column.
func TestPeerTLSMismatchIsLoud(t *testing.T) {
	ca := newPKI(t, "peers")
	n1 := newServer(t)
	n1.start(append([]string{"--name", "n1"}, ca.peerArgs("n1")...)...)
	n2 := newServer(t)
	if out, errOut, rc := n1.cli("cluster", "add", "--name", "n2", "--peer-addr", n2.peers); rc != 0 {
		t.Fatalf("cluster add: rc=%d %s %s", rc, out, errOut)
	}
	foreign := newPKI(t, "foreign")
	fc, fk := foreign.issue("n2", "n2", time.Time{}, time.Time{})
	n2.args = []string{"--name", "n2", "--join", n1.grpcAddr, "--peer-cert-file", fc, "--peer-key-file", fk, "--peer-ca-file", foreign.caFile}
	n2.startAsync()

	want := "peer TLS handshake with " + n1.peers + " failed: certificate signed by unknown authority"
	waitFor(t, 30*time.Second, "n2's /readyz saying why it is not ready", func() error {
		code, body, err := n2.readyz()
		switch {
		case err != nil && !n2.running():
			return fmt.Errorf("n2 exited: %s", n2.stderr.String())
		case err != nil:
			return err
		case code != http.StatusServiceUnavailable || !strings.Contains(body, want):
			return fmt.Errorf("readyz %d %q, want 503 with %q", code, body, want)
		}
		return nil
	})
	waitFor(t, 30*time.Second, "cluster status showing why n2 is unreachable", func() error {
		out, errOut, rc := n1.cli("cluster", "status")
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "n2 ") && strings.HasSuffix(line, "unreachable: TLS handshake: certificate signed by unknown authority") && rc == 1 {
				return nil
			}
		}
		return fmt.Errorf("rc=%d\n%s%s", rc, out, errOut)
	})

	// Both sides, both directions: each side's dials fail on the other's
	// certificate, and each refuses the other's connections.
	n1.waitLog(10*time.Second, "peer="+n2.peers+` reason="certificate signed by unknown authority"`)
	n1.waitLog(10*time.Second, `peer=127.0.0.1 reason="remote error: tls: bad certificate"`)
	n2.waitLog(10*time.Second, "peer="+n1.peers+` reason="certificate signed by unknown authority"`)
	n2.waitLog(10*time.Second, `peer=127.0.0.1 reason="remote error: tls: bad certificate"`)
	// Some seconds of failures later (the leader retries every 50 to 200
	// ms, the joiner asks every 2 s), still one line per peer and reason.
	waitFor(t, 60*time.Second, "many failed sends to n2", func() error {
		if v := metric(t, n1, "metalog_peer_send_failures_total"); v < 30 {
			return fmt.Errorf("%v failed sends", v)
		}
		return nil
	})
	for _, s := range []*server{n1, n2} {
		log := s.stderr.String()
		if n := countLines(log, peerTLSWarn); n != 2 {
			t.Errorf("%s logged %d WARN lines of failed peer TLS handshakes, want 2 (one per side):\n%s", s.peers, n, log)
		}
	}
}

// TestJoinAtTheWrongPortSaysWhichPort: --join given a member's peer port or
// its HTTP port fails at once, saying which port it reached and that it
// needs the gRPC client address (the member's, for the peer port), and
// writes nothing.
func TestJoinAtTheWrongPortSaysWhichPort(t *testing.T) {
	n1 := newServer(t)
	n1.start("--name", "n1")
	j := newServer(t)
	if out, errOut, rc := n1.cli("cluster", "add", "--name", "j1", "--peer-addr", j.peers); rc != 0 {
		t.Fatalf("cluster add: rc=%d %s %s", rc, out, errOut)
	}
	for _, tc := range []struct{ port, addr, want string }{
		{"peer", n1.peers, "--join " + n1.peers + " reached member n1's peer port (--peer-addr); --join needs a member's gRPC client address (--grpc-addr, e.g. " + n1.grpcAddr + ")"},
		{"HTTP", n1.httpAddr, "--join " + n1.httpAddr + " reached an HTTP server, most likely a member's HTTP port (--http-addr); --join needs a member's gRPC client address (--grpc-addr)"},
	} {
		j.args = []string{"--name", "j1", "--join", tc.addr}
		j.startAsync()
		if code := j.waitExit(30 * time.Second); code == 0 || !strings.Contains(j.stderr.String(), tc.want) {
			t.Errorf("--join at the %s port: exit %d, want an error saying %q:\n%s", tc.port, code, tc.want, j.stderr.String())
		}
		if _, err := os.Stat(j.dir); !os.IsNotExist(err) {
			t.Errorf("--join at the %s port: the data dir was created (%v)", tc.port, err)
		}
	}
}

// serveRefused runs serve with args on fresh ports (the CQL listener
// off) and a data dir that does not exist, and checks that it exits
// non-zero with want on stderr and creates no data dir.
func serveRefused(t *testing.T, what, want string, args ...string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	args = append([]string{"serve", "--data-dir", dir, "--grpc-addr", freeAddr(t), "--http-addr", freeAddr(t), "--cql-addr", ""}, args...)
	_, errOut, rc := runBinary(t, args...)
	if rc == 0 || !strings.Contains(errOut, want) {
		t.Errorf("%s: rc=%d, want an error saying %q:\n%s", what, rc, want, errOut)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s: the data dir was created (%v)", what, err)
	}
}

// TestServeRefusesBadNamesAndAContradictingInitialCluster: serve refuses a
// --name (or name key) that breaks the name rule, an --initial-cluster
// that lists this member at another address than --peer-addr, one with a
// bad name or an address twice, and writes nothing.
func TestServeRefusesBadNamesAndAContradictingInitialCluster(t *testing.T) {
	peer, other := freeAddr(t), freeAddr(t)
	cfg := filepath.Join(t.TempDir(), "metalog.yaml")
	if err := os.WriteFile(cfg, []byte("name: \"a,b\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what, want string
		args       []string
	}{
		{"--name a,b", `name (--name): bad name: "a,b" has ',' at byte 2`, []string{"--peer-addr", peer, "--name", "a,b"}},
		{"--name bad=name", `name (--name): bad name: "bad=name" has '=' at byte 4`, []string{"--peer-addr", peer, "--name", "bad=name"}},
		{"name key a,b", `name (--name): bad name: "a,b" has ','`, []string{"--peer-addr", peer, "--config", cfg}},
		{"contradicting --initial-cluster",
			"initial_cluster (--initial-cluster) lists this member, n1, at " + other + ", but its peer_addr (--peer-addr) is " + peer,
			[]string{"--peer-addr", peer, "--name", "n1", "--initial-cluster", "n1=" + other}},
		{"an address twice", "members n1 and n2 both listed at " + peer,
			[]string{"--peer-addr", peer, "--name", "n1", "--initial-cluster", "n1=" + peer + ",n2=" + peer}},
		{"a bad name in --initial-cluster", `bad name: "n 2" has ' '`,
			[]string{"--peer-addr", peer, "--name", "n1", "--initial-cluster", "n1=" + peer + ",n 2=" + other}},
		{"--name not in --initial-cluster", `this member's name "n1" is not in`,
			[]string{"--peer-addr", peer, "--name", "n1", "--initial-cluster", "n2=" + other}},
	} {
		serveRefused(t, tc.what, tc.want, tc.args...)
	}
}

// TestBadMemberAndTokenNamesAreRefused: cluster add and token new refuse
// what serve and the token file would refuse, adding and printing
// nothing; a token file with a bad name is refused at start, naming
// file:line, and on reload, keeping the tokens it had.
func TestBadMemberAndTokenNamesAreRefused(t *testing.T) {
	s, ca := securedServer(t)
	ops := []string{"--cacert", ca.caFile, "--token", "ops-token"}
	for _, name := range []string{"x\ny", "#ops", "a,b", "tab\tname", "nbsp\u00a0name"} {
		out, errOut, rc := s.cli(append([]string{"cluster", "add", "--name", name, "--peer-addr", freeAddr(t)}, ops...)...)
		if rc == 0 || !strings.Contains(errOut, "bad name") || !strings.Contains(errOut, "nothing was added") {
			t.Errorf("cluster add --name %q: rc=%d %s %s, want it refused as a bad name", name, rc, out, errOut)
		}
	}
	out, errOut, rc := s.cli(append([]string{"cluster", "status"}, ops...)...)
	if rc != 0 || strings.Count(strings.TrimSpace(out), "\n") != 1 {
		t.Fatalf("cluster status after the refused adds: rc=%d, want n1 alone:\n%s%s", rc, out, errOut)
	}

	out, errOut, rc = runBinary(t, "token", "new", "--name", "bad name")
	if rc == 0 || out != "" || !strings.Contains(errOut, `--name: bad name: "bad name" has ' ' at byte 4`) || strings.Contains(errOut, "auth_token_file:") {
		t.Errorf("token new --name 'bad name': rc=%d stdout %q stderr %q, want it refused with nothing printed", rc, out, errOut)
	}

	// A bad line at start: nothing starts, nothing is written.
	bad := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(bad, []byte("# ops\nops,admin "+tokenHash("t")+" operator\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	serveRefused(t, "a token file with a bad name", bad+`:2: token name: bad name: "ops,admin" has ','`, "--peer-addr", freeAddr(t), "--auth-token-file", bad, insecurePeerArg)

	// The same line added to the running server's file: the reload is
	// refused and the tokens it had stay in use.
	tokens := filepath.Join(ca.dir, "tokens")
	f, err := os.OpenFile(tokens, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "ops,admin %s operator\n", tokenHash("new-token"))
	f.Close()
	s.cmd.Process.Signal(syscall.SIGHUP)
	s.waitLog(10*time.Second, "SIGHUP: reloading certificates and tokens failed; the previous ones stay in use")
	s.waitLog(10*time.Second, tokens+`:5: token name: bad name: \"ops,admin\" has ','`)
	if out, errOut, rc := s.cli("describe", "--cacert", ca.caFile, "--token", "reader-token"); rc != 0 {
		t.Fatalf("the reader token after the refused reload: rc=%d %s %s", rc, out, errOut)
	}
	if _, errOut, rc := s.cli("describe", "--cacert", ca.caFile, "--token", "new-token"); rc == 0 || !strings.Contains(errOut, "Unauthenticated") {
		t.Fatalf("the refused line's token: rc=%d %s, want Unauthenticated", rc, errOut)
	}
}
