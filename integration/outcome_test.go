package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// httpAnswer is an HTTP request's status and body, or why it failed.
type httpAnswer struct {
	code int
	body string
	err  error
}

// postAsync sends body to url in the background, bounded in time, and
// returns where its answer will come.
func postAsync(url, body string) <-chan httpAnswer {
	done := make(chan httpAnswer, 1)
	go func() {
		c := &http.Client{Timeout: 30 * time.Second}
		resp, err := c.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			done <- httpAnswer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		done <- httpAnswer{code: resp.StatusCode, body: string(b), err: err}
	}()
	return done
}

// outcomeBody is the gateway's error form of an outcome-unknown answer.
type outcomeBody struct {
	Code      int    `json:"code"`
	Message   string `json:"message"`
	Outcome   string `json:"outcome"`
	RequestID string `json:"request_id"`
	Details   []struct {
		Reason   string            `json:"reason"`
		Metadata map[string]string `json:"metadata"`
	} `json:"details"`
}

// requestIDOf reads the request id an outcome-unknown message of the CLI
// names.
var requestIDOf = regexp.MustCompile(`the change may still apply \(exit code 3\); request id (\S+)`)

// TestOutcomeUnknownWhenTheLeaderLosesItsFollowers: both followers of a
// three-member cluster are killed while DDL reaches the leader over gRPC
// (metalog exec) and HTTP. The leader appends both, then steps down: the
// CLI exits 3 saying the change may still apply, with its request id, and
// HTTP answers 504 with "outcome": "unknown" and the server's request id;
// nothing says Unavailable. A DDL sent once no leader is known is
// Unavailable (exit 1). When a follower comes back, the old leader (which
// has the longest log) leads again and commits what it had: metalog request
// says both applied and the tables exist, while the Unavailable ones (CLI
// exit 1, HTTP 503 NOT_PROPOSED) were not applied and their tables do not
// exist.
func TestOutcomeUnknownWhenTheLeaderLosesItsFollowers(t *testing.T) {
	c := newCluster(t, 3, "--request-timeout", "4s")
	leader := c.agreedLeader()
	l := c.servers[leader]
	if _, stderr, rc := l.cli("exec", "-e", "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}"); rc != 0 {
		t.Fatalf("create keyspace: %s", stderr)
	}
	c.waitSameDigest()
	var followers []int
	for i, s := range c.servers {
		if i != leader {
			followers = append(followers, i)
			s.kill()
		}
	}
	// Both requests reach the leader before it notices (an election
	// timeout, 1 s, at the least).
	viaHTTP := postAsync("http://"+l.httpAddr+"/v1/execute", `{"statements": "CREATE TABLE shop.ambiguous_http (id int PRIMARY KEY)"}`)
	_, stderr, rc := l.cli("exec", "--timeout", "4s", "-e", "CREATE TABLE shop.ambiguous (id int PRIMARY KEY)")
	m := requestIDOf.FindStringSubmatch(stderr)
	if rc != 3 || m == nil || strings.Contains(stderr, "Unavailable") || !strings.Contains(stderr, "learn what happened: metalog request "+m[1]) {
		t.Fatalf("exec on a leader that lost its followers: exit %d\n%s\nwant exit 3, the request id and how to learn what happened", rc, stderr)
	}
	t.Logf("exec answered (exit 3):\n%s", stderr)
	cliID := m[1]
	l.waitLog(10*time.Second, "execute outcome unknown")

	a := <-viaHTTP
	var body outcomeBody
	if a.err != nil || a.code != http.StatusGatewayTimeout || json.Unmarshal([]byte(a.body), &body) != nil || len(body.Details) != 1 {
		t.Fatalf("POST /v1/execute: %d %s %v; want 504 in the gateway's error form", a.code, a.body, a.err)
	}
	httpID := body.Details[0].Metadata["request_id"]
	if body.Details[0].Reason != "OUTCOME_UNKNOWN" || body.Details[0].Metadata["outcome"] != "unknown" || !strings.HasPrefix(httpID, "server-") ||
		!strings.Contains(body.Message, "may still apply") || body.Outcome != "unknown" || body.RequestID != httpID {
		t.Fatalf("504 body: %s", a.body)
	}

	waitFor(t, 20*time.Second, "the old leader to step down", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := l.client().ListMembers(ctx, &pb.ListMembersRequest{})
		if err != nil {
			return err
		}
		if resp.Leader != "" {
			return fmt.Errorf("it knows leader %s", resp.Leader)
		}
		return nil
	})
	refusedHTTP := postAsync("http://"+l.httpAddr+"/v1/execute", `{"statements": "CREATE TABLE shop.refused_http (id int PRIMARY KEY)", "request_id": "refused-2"}`)
	_, stderr, rc = l.cli("exec", "--timeout", "2s", "--request-id", "refused-1", "-e", "CREATE TABLE shop.refused (id int PRIMARY KEY)")
	if rc != 1 || !strings.Contains(stderr, "Unavailable") || strings.Contains(stderr, "outcome unknown") {
		t.Fatalf("exec with no leader known: exit %d %s; want exit 1, Unavailable", rc, stderr)
	}
	a = <-refusedHTTP
	body = outcomeBody{}
	if a.err != nil || a.code != http.StatusServiceUnavailable || json.Unmarshal([]byte(a.body), &body) != nil || len(body.Details) != 1 || body.Details[0].Reason != "NOT_PROPOSED" {
		t.Fatalf("POST /v1/execute with no leader known: %d %s %v; want 503 NOT_PROPOSED", a.code, a.body, a.err)
	}

	// One follower first: it cannot win an election against the old
	// leader's longer log, so the old leader commits what it appended.
	c.servers[followers[0]].start()
	c.leader()
	c.servers[followers[1]].start()
	c.waitSameDigest()
	for _, id := range []string{cliID, httpID} {
		stdout, stderr, rc := l.cli("request", id)
		if rc != 0 || !strings.Contains(stdout, "applied at epoch") || !strings.Contains(stdout, "CREATE TABLE") {
			t.Errorf("metalog request %s: exit %d\n%s%s\nwant applied", id, rc, stdout, stderr)
		}
	}
	code, got := httpDo(t, "GET", "http://"+l.httpAddr+"/v1/requests/"+httpID, "")
	if code != 200 || !strings.Contains(got, `"state":"applied"`) {
		t.Errorf("GET /v1/requests/%s: %d %s", httpID, code, got)
	}
	for _, table := range []string{"shop.ambiguous", "shop.ambiguous_http"} {
		if _, stderr, rc := l.cli("describe", table); rc != 0 {
			t.Errorf("describe %s: %s", table, stderr)
		}
	}
	for id, table := range map[string]string{"refused-1": "shop.refused", "refused-2": "shop.refused_http"} {
		if stdout, stderr, rc := l.cli("request", id); rc != 0 || !strings.Contains(stdout, "had not applied as of epoch") {
			t.Errorf("metalog request %s: exit %d\n%s%s\nwant not applied", id, rc, stdout, stderr)
		}
		if _, stderr, rc := l.cli("describe", table); rc != 1 || !strings.Contains(stderr, "NotFound") {
			t.Errorf("describe %s: exit %d %s, want NotFound", table, rc, stderr)
		}
	}
}

// pendingProposals reads metalog_raft_proposals_pending from s's /metrics.
func pendingProposals(s *server) (float64, error) {
	resp, err := http.Get("http://" + s.httpAddr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	v, ok := metricValue(string(b), "metalog_raft_proposals_pending")
	if !ok {
		return 0, fmt.Errorf("no metalog_raft_proposals_pending on /metrics")
	}
	return v, nil
}

// TestExecFileWhoseMemberIsKilledMidway: an exec -f of 10,000 statements
// reaches the leader, which has lost its followers and waits for a quorum;
// the leader is killed (kill -9) while the proposal is pending, and the
// other endpoints refuse connections. The CLI exits 3, outcome unknown
// with the request id, instead of "connection refused". Once the members
// are back, metalog request says what happened, and the schema agrees:
// all 10,000 tables if it applied, none if not.
func TestExecFileWhoseMemberIsKilledMidway(t *testing.T) {
	c := newCluster(t, 3)
	leader := c.agreedLeader()
	l := c.servers[leader]
	if _, stderr, rc := l.cli("exec", "-e", "CREATE KEYSPACE bulk WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}"); rc != 0 {
		t.Fatalf("create keyspace: %s", stderr)
	}
	c.waitSameDigest()
	const n = 10000
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "CREATE TABLE bulk.t%05d (id int PRIMARY KEY, v text);\n", i)
	}
	file := filepath.Join(t.TempDir(), "bulk.cql")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var followers []int
	for i, s := range c.servers {
		if i != leader {
			followers = append(followers, i)
			s.kill()
		}
	}
	type result struct {
		stderr string
		rc     int
	}
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		eps := l.grpcAddr + "," + c.servers[followers[0]].grpcAddr + "," + c.servers[followers[1]].grpcAddr
		cmd := exec.CommandContext(ctx, binary, "exec", "-f", file, "--timeout", "30s", "--endpoints", eps)
		var errb strings.Builder
		cmd.Stderr = &errb
		cmd.Run()
		done <- result{errb.String(), cmd.ProcessState.ExitCode()}
	}()
	waitFor(t, 30*time.Second, "the leader to hold the proposal", func() error {
		if v, err := pendingProposals(l); err != nil || v < 1 {
			return fmt.Errorf("pending %v, %v", v, err)
		}
		return nil
	})
	l.kill()
	r := <-done
	m := requestIDOf.FindStringSubmatch(r.stderr)
	if r.rc != 3 || m == nil || !strings.Contains(r.stderr, "outcome unknown") || strings.Contains(r.stderr, "Unavailable") {
		t.Fatalf("exec -f whose member was killed: exit %d\n%s\nwant exit 3, outcome unknown with the request id", r.rc, r.stderr)
	}
	t.Logf("exec answered (exit 3):\n%s", r.stderr)

	l.startAsync()
	c.servers[followers[0]].start()
	l.waitReady()
	c.servers[followers[1]].start()
	c.waitSameDigest()
	stdout, stderr, rc := l.cli("request", m[1])
	if rc != 0 {
		t.Fatalf("metalog request %s: %s", m[1], stderr)
	}
	names, _ := tableNames(t, l.client(), "bulk")
	switch {
	case strings.Contains(stdout, "applied at epoch") && len(names) == n:
		t.Logf("the request applied whole once the members were back")
	case strings.Contains(stdout, "had not applied as of epoch") && len(names) == 0:
		t.Logf("the request was lost with the leader's unsynced log")
	default:
		t.Fatalf("metalog request says\n%s\nwith %d of %d tables", stdout, len(names), n)
	}
}
