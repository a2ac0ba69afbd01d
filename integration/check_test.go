package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// TestClusterCheckOneRoundAtScale checks agreement on a 3-member cluster
// holding 100,000 tables (10,000 with -short): one NodeStatus call per
// other member, whatever the table count; a stopped member makes the check
// fail and name it.
func TestClusterCheckOneRoundAtScale(t *testing.T) {
	tables := 100000
	if testing.Short() {
		tables = 10000
	}
	// No CQL listeners: each one's membership goroutine lists the members
	// every 5 s (cqlserver.DefaultMembershipInterval), and its status
	// calls would count with the check's.
	c := newCluster(t, 3, "--cql-addr", "")
	cl := c.servers[0].client()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := cl.SetGuardrails(ctx, &pb.SetGuardrailsRequest{Set: map[string]string{"tables_warn_threshold": "-1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Execute(ctx, &pb.ExecuteRequest{Statements: ksRF3}); err != nil {
		t.Fatal(err)
	}
	createTables(t, cl, "t", 0, tables, 2000)
	c.waitSameDigest()

	before := metric(t, c.servers[0], "metalog_cluster_status_calls_total")
	r, err := cl.CheckCluster(ctx, &pb.CheckClusterRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Agreement || r.Rpcs != 2 || len(r.Members) != 3 {
		t.Fatalf("check: %v", r)
	}
	if got := metric(t, c.servers[0], "metalog_cluster_status_calls_total") - before; got != 2 {
		t.Fatalf("the check made %v NodeStatus calls, want 2 (one per other member)", got)
	}
	for _, m := range r.Members {
		if m.State != "agrees" {
			t.Fatalf("member %s: %s %s", m.Name, m.State, m.Detail)
		}
	}
	out, stderr, rc := c.servers[1].cli("cluster", "check")
	if rc != 0 || !strings.Contains(out, "agreement: yes") {
		t.Fatalf("cluster check: rc=%d %s %s", rc, out, stderr)
	}
	code, body := httpDo(t, "GET", "http://"+c.servers[2].httpAddr+"/v1/cluster/check", "")
	if code != 200 || !strings.Contains(body, `"agreement":true`) {
		t.Fatalf("GET /v1/cluster/check: %d %s", code, body)
	}

	c.servers[2].stop()
	out, _, rc = c.servers[0].cli("cluster", "check")
	if rc == 0 || !strings.Contains(out, "agreement: NO") || !strings.Contains(out, "unreachable") {
		t.Fatalf("cluster check with a member down: rc=%d\n%s", rc, out)
	}
}
