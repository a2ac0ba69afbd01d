package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// TestForceNewClusterAfterLosingTwo: two of three members are lost for
// good (kill -9, never started again); serve --force-new-cluster on the
// survivor makes it a cluster of one holding every DDL it had applied; two
// fresh members join it, and the three agree.
func TestForceNewClusterAfterLosingTwo(t *testing.T) {
	c := newCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.servers[0].client().Execute(ctx, &pb.ExecuteRequest{Statements: ksRF3}); err != nil {
		t.Fatal(err)
	}
	createTables(t, c.servers[1].client(), "t", 0, 60, 3)
	// What the survivor had applied is what it keeps: with every member
	// at the same epoch, that is every acknowledged DDL. (A survivor
	// behind the others would lose what it never received: the README
	// says to pick the one with the highest applied index.)
	c.waitSameDigest()
	survivor := c.servers[0]
	for _, s := range c.servers {
		s.kill()
	}
	survivor.start("--name", "n1", "--force-new-cluster")
	survivor.waitLog(10*time.Second, "is now its cluster's only voter")
	if _, err := survivor.client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.after (id int PRIMARY KEY)"}); err != nil {
		t.Fatalf("DDL after --force-new-cluster: %v", err)
	}
	schema, err := survivor.client().GetSchema(ctx, &pb.GetSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range schema.Keyspaces {
		for _, tb := range k.Tables {
			if strings.HasPrefix(tb.Name, "t_") {
				n++
			}
		}
	}
	if n != 60 {
		t.Fatalf("the survivor holds %d of the 60 acknowledged tables", n)
	}

	// Two fresh members join; the survivor runs without the flag again.
	r := &cluster{t: t, servers: []*server{survivor}, names: []string{"n1"}}
	for _, name := range []string{"n4", "n5"} {
		s := newServer(t)
		if out, stderr, rc := survivor.cli("cluster", "add", "--name", name, "--peer-addr", s.peers); rc != 0 {
			t.Fatalf("cluster add %s: rc=%d %s %s", name, rc, out, stderr)
		}
		s.start("--name", name, "--join", survivor.grpcAddr)
		r.servers, r.names = append(r.servers, s), append(r.names, name)
		r.waitVoter(name)
	}
	survivor.stop()
	survivor.start("--name", "n1")
	if _, err := r.servers[2].client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.three_again (id int PRIMARY KEY)"}); err != nil {
		t.Fatal(err)
	}
	r.waitSameDigest()
	if out, stderr, rc := survivor.cli("cluster", "check"); rc != 0 {
		t.Fatalf("cluster check: rc=%d %s %s", rc, out, stderr)
	}
}
