package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
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

// TestClusterStatusUnreachable: cluster status exits 1 when a member
// cannot be reached, shows what is known of it with "-" for the rest and
// says why in a few words; cluster add prints a complete serve command.
func TestClusterStatusUnreachable(t *testing.T) {
	c := newCluster(t, 3)
	c.waitSameDigest()
	if out, stderr, rc := c.servers[0].cli("cluster", "status"); rc != 0 || strings.Contains(out, "unreachable") {
		t.Fatalf("cluster status with every member up: rc=%d\n%s%s", rc, out, stderr)
	}

	c.servers[2].kill()
	out, stderr, rc := c.servers[0].cli("cluster", "status")
	if rc != 1 || !strings.Contains(stderr, "1 of 3 members unreachable: n3") {
		t.Errorf("cluster status with n3 down: rc=%d stderr %q, want exit 1 naming n3", rc, stderr)
	}
	if strings.Contains(out, "rpc error") || strings.Contains(out, "transport") {
		t.Errorf("cluster status shows gRPC's text:\n%s", out)
	}
	// NAME ID PEER GRPC ROLE [LEADER] TERM COMMIT APPLIED EPOCH DIGEST ALARMS ERROR,
	// the leader's * left out.
	rows := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		f := strings.Fields(line)
		f = slices.DeleteFunc(f, func(s string) bool { return s == "*" })
		rows[f[0]] = strings.Join(f[3:], " ")
	}
	if want := "- voter - - - - - - unreachable: connection refused"; rows["n3"] != want {
		t.Errorf("n3's row ends %q, want %q:\n%s", rows["n3"], want, out)
	}
	for _, name := range []string{"n1", "n2"} {
		if r := rows[name]; r == "" || strings.Contains(r, "-") {
			t.Errorf("%s's row ends %q: want its own status:\n%s", name, r, out)
		}
	}

	n4 := freeAddr(t)
	out, stderr, rc = c.servers[0].cli("cluster", "add", "--name", "n4", "--peer-addr", n4)
	want := "start it with: metalog serve --name n4 --data-dir DIR --grpc-addr HOST:PORT --http-addr HOST:PORT --cql-addr HOST:PORT --peer-addr " + n4 + " --join " + c.servers[0].grpcAddr + "\n"
	if rc != 0 || !strings.Contains(out, want) {
		t.Errorf("cluster add: rc=%d %s%s\nwant %q", rc, out, stderr, want)
	}
}

// TestCLIDescribeQuotedNames: describe reads its argument as CQL names, so
// the spelling it prints for a quoted name finds the table again.
func TestCLIDescribeQuotedNames(t *testing.T) {
	s := newServer(t)
	s.start()
	if out, stderr, rc := s.cli("exec", "-e", `CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; CREATE TABLE shop."MixedCase" (id int PRIMARY KEY); CREATE KEYSPACE "Quoted" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; CREATE TABLE "Quoted".t (id int PRIMARY KEY)`); rc != 0 {
		t.Fatalf("exec: rc=%d %s %s", rc, out, stderr)
	}
	whole, stderr, rc := s.cli("describe")
	if rc != 0 || !strings.Contains(whole, `CREATE TABLE shop."MixedCase"`) {
		t.Fatalf("describe: rc=%d %s %s; want shop.\"MixedCase\"", rc, whole, stderr)
	}
	for arg, want := range map[string]string{
		`shop."MixedCase"`: `CREATE TABLE shop."MixedCase"`,
		`SHOP."MixedCase"`: `CREATE TABLE shop."MixedCase"`,
		`"Quoted"`:         `CREATE TABLE "Quoted".t`,
		`"Quoted".T`:       `CREATE TABLE "Quoted".t`,
	} {
		if out, stderr, rc := s.cli("describe", arg); rc != 0 || !strings.Contains(out, want) {
			t.Errorf("describe %s: rc=%d %s %s; want %s", arg, rc, out, stderr, want)
		}
	}
	_, stderr, rc = s.cli("describe", "a.b.c")
	if want := `describe "a.b.c": 3 names; want keyspace or keyspace.table`; rc != 1 || !strings.Contains(stderr, want) {
		t.Errorf("describe a.b.c: rc=%d %q, want exit 1 and %q", rc, stderr, want)
	}
}

// TestCLIExecRefusesNonUTF8: a file that is not UTF-8 is refused by the CLI,
// naming the file and the first invalid byte, and nothing of it applies.
func TestCLIExecRefusesNonUTF8(t *testing.T) {
	s := newServer(t)
	s.start()
	file := filepath.Join(t.TempDir(), "latin1.cql")
	text := "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};\nCREATE TABLE ks.t (id int PRIMARY KEY) WITH comment = 'caf\xe9'"
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, rc := s.cli("exec", "-f", file)
	want := fmt.Sprintf("%s: not UTF-8: invalid byte 0xe9 at byte offset %d (line 2,", file, strings.IndexByte(text, 0xe9))
	if rc != 1 || !strings.Contains(stderr, want) {
		t.Errorf("exec -f latin1.cql: rc=%d %q, want exit 1 and %q", rc, stderr, want)
	}
	if out, stderr, rc := s.cli("describe"); rc != 0 || strings.Contains(out, "ks") {
		t.Errorf("describe after the refused file: rc=%d %s %s; want an empty schema", rc, out, stderr)
	}
}

// versionLine matches what `metalog version` prints.
var versionLine = regexp.MustCompile(`^metalog (\S+) \(commit (\S+), (go\S+)\)\n$`)

// binaryVersion runs `metalog version` and returns the version, the
// revision and the Go version it prints.
func binaryVersion(t *testing.T) (version, revision, goVersion string) {
	t.Helper()
	out, stderr, rc := runBinary(t, "version")
	m := versionLine.FindStringSubmatch(out)
	if rc != 0 || m == nil {
		t.Fatalf("metalog version: rc=%d %q %s; want metalog VERSION (commit REVISION, GOVERSION)", rc, out, stderr)
	}
	return m[1], m[2], m[3]
}

// TestCLIVersion: metalog version and --version print the build, and
// /metrics serves the same as metalog_build_info.
func TestCLIVersion(t *testing.T) {
	version, revision, goVersion := binaryVersion(t)
	if goVersion != runtime.Version() {
		t.Errorf("metalog version says %s, the binary was built by %s", goVersion, runtime.Version())
	}
	out, _, rc := runBinary(t, "version")
	if flag, stderr, frc := runBinary(t, "--version"); frc != 0 || rc != 0 || flag != out {
		t.Errorf("metalog --version: rc=%d %q %s; want what metalog version prints, %q", frc, flag, stderr, out)
	}
	s := newServer(t)
	s.start()
	code, body := httpDo(t, "GET", "http://"+s.httpAddr+"/metrics", "")
	want := fmt.Sprintf("metalog_build_info{goversion=%q,revision=%q,version=%q} 1\n", goVersion, revision, version)
	if code != 200 || !strings.Contains(body, want) {
		t.Errorf("GET /metrics: %d, no %q", code, want)
	}
}
