package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
)

const ksRF3 = "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}"

// TestThreeNodesConvergeAndSurviveLeaderKill sends DDL to every member,
// then kills the leader with SIGKILL while 8 clients create tables through
// all members, restarts it, and checks every acknowledged table is on every
// member and all digests agree.
func TestThreeNodesConvergeAndSurviveLeaderKill(t *testing.T) {
	c := newCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.servers[1].client().Execute(ctx, &pb.ExecuteRequest{Statements: ksRF3}); err != nil {
		t.Fatal(err)
	}
	for i, s := range c.servers {
		r, err := s.client().Execute(ctx, &pb.ExecuteRequest{Statements: fmt.Sprintf("CREATE TABLE ks.via_%d (id int PRIMARY KEY)", i)})
		if err != nil {
			t.Fatalf("DDL on %s: %v", c.names[i], err)
		}
		if r.Epoch == 0 {
			t.Fatalf("DDL on %s: no epoch in %v", c.names[i], r)
		}
	}
	c.waitSameDigest()

	leader := c.leader()
	const clients, perClient = 8, 25
	var mu sync.Mutex // guards acked
	var acked []string
	var wg sync.WaitGroup
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perClient {
				name := fmt.Sprintf("c%d_%d", w, i)
				req := &pb.ExecuteRequest{Statements: "CREATE TABLE ks." + name + " (id int PRIMARY KEY)", RequestId: name}
				// Retry under the same request id until acknowledged: the
				// cluster must apply it exactly once.
				for attempt := 0; ctx.Err() == nil; attempt++ {
					rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
					_, err := c.servers[(w+i+attempt)%len(c.servers)].client().Execute(rctx, req)
					rcancel()
					if err == nil {
						mu.Lock()
						acked = append(acked, name)
						mu.Unlock()
						break
					}
				}
			}
		}()
	}
	// Kill the leader once the clients are in full flow.
	waitFor(t, 30*time.Second, "the first acknowledgements", func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(acked) < 20 {
			return fmt.Errorf("%d acknowledged", len(acked))
		}
		return nil
	})
	c.servers[leader].kill()
	wg.Wait()
	c.servers[leader].start()

	if len(acked) != clients*perClient {
		t.Fatalf("%d of %d DDLs acknowledged", len(acked), clients*perClient)
	}
	_, epoch := c.waitSameDigest()
	// keyspace + 3 tables + every client table, each exactly once.
	if want := uint64(1 + 3 + clients*perClient); epoch != want {
		t.Fatalf("epoch %d, want %d: a retried DDL applied twice or one was lost", epoch, want)
	}
	for i, s := range c.servers {
		names, _ := tableNames(t, s.client(), "ks")
		for _, n := range acked {
			if !names[n] {
				t.Fatalf("%s lacks acknowledged table %s", c.names[i], n)
			}
		}
	}
}
