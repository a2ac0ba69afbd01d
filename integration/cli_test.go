package integration

import (
	"strings"
	"testing"
)

// TestCLIEndpointFailures: a client command fails by itself, naming the
// address and why, against an endpoint where nothing listens or against a
// member's HTTP port; a dead endpoint before a live one costs nothing. The
// commands get a --timeout of 10 minutes and runBinary kills them after 30
// s: a command that ends with exit 1 ended because of what the endpoints
// answered, not because time ran out.
func TestCLIEndpointFailures(t *testing.T) {
	s := newServer(t)
	s.start()
	dead, dead2 := freeAddr(t), freeAddr(t)

	t.Run("refused", func(t *testing.T) {
		_, stderr, rc := runBinary(t, "describe", "--endpoints", dead+","+dead2, "--timeout", "10m")
		want := "Unavailable: " + dead + ": connection refused; " + dead2 + ": connection refused"
		if rc != 1 || !strings.Contains(stderr, want) {
			t.Errorf("describe against two dead endpoints: rc=%d %q, want exit 1 and %q", rc, stderr, want)
		}
	})
	t.Run("HTTP port", func(t *testing.T) {
		_, stderr, rc := runBinary(t, "describe", "--endpoints", s.httpAddr, "--timeout", "10m")
		want := s.httpAddr + ": this looks like the HTTP port, not gRPC"
		if rc != 1 || !strings.Contains(stderr, want) {
			t.Errorf("describe against the HTTP port: rc=%d %q, want exit 1 and %q", rc, stderr, want)
		}
	})
	t.Run("dead then live", func(t *testing.T) {
		eps := dead + "," + s.grpcAddr
		stdout, stderr, rc := runBinary(t, "exec", "--endpoints", eps, "-e", "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
		if rc != 0 || !strings.Contains(stdout, "applied") {
			t.Fatalf("exec with a dead endpoint first: rc=%d %s %s", rc, stdout, stderr)
		}
		if stdout, stderr, rc = runBinary(t, "describe", "ks", "--endpoints", eps); rc != 0 || !strings.Contains(stdout, "CREATE KEYSPACE ks") {
			t.Errorf("describe with a dead endpoint first: rc=%d %s %s", rc, stdout, stderr)
		}
	})
}
