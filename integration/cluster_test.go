package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// cluster is a set of metalog processes started with one --initial-cluster.
type cluster struct {
	t       *testing.T
	servers []*server
	names   []string
}

// newCluster prepares n members on fresh loopback ports and starts them.
// A peer port taken by another process between freeAddr and the bind fixes
// the whole --initial-cluster, so then the cluster starts again on new
// ports (a few times).
func newCluster(t *testing.T, n int, extra ...string) *cluster {
	return newClusterOf(t, n, nil, extra...)
}

// newClusterOf is newCluster with prepare, if not nil, called on every
// server before it first starts, to choose its binary or environment.
func newClusterOf(t *testing.T, n int, prepare func(*server), extra ...string) *cluster {
	return newClusterEach(t, n, prepare, nil, extra...)
}

// newClusterEach is newClusterOf with each, if not nil, giving the
// arguments of the member of each name (n1, n2, ...) besides extra: its
// own peer certificate, say.
func newClusterEach(t *testing.T, n int, prepare func(*server), each func(name string) []string, extra ...string) *cluster {
	for attempt := 0; ; attempt++ {
		c := &cluster{t: t}
		var ic []string
		for i := range n {
			s := newServer(t)
			if prepare != nil {
				prepare(s)
			}
			name := fmt.Sprintf("n%d", i+1)
			c.servers = append(c.servers, s)
			c.names = append(c.names, name)
			ic = append(ic, name+"="+s.peers)
		}
		for i, s := range c.servers {
			s.args = append([]string{"--name", c.names[i], "--initial-cluster", strings.Join(ic, ",")}, extra...)
			if each != nil {
				s.args = append(s.args, each(c.names[i])...)
			}
			s.startAsync()
		}
		var err error
		for _, s := range c.servers {
			if err = s.readyErr(30 * time.Second); err != nil {
				break
			}
		}
		if err == nil {
			return c
		}
		for _, s := range c.servers {
			s.kill()
		}
		if attempt >= 2 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatalf("cluster not ready: %v", err)
		}
	}
}

// endpoints lists every member's gRPC address.
func (c *cluster) endpoints() string {
	var eps []string
	for _, s := range c.servers {
		eps = append(eps, s.grpcAddr)
	}
	return strings.Join(eps, ",")
}

// leader returns the index of the member that says it leads, asking the
// running ones, or only those of among (indexes) if any are given.
func (c *cluster) leader(among ...int) int {
	c.t.Helper()
	var idx int
	waitFor(c.t, 20*time.Second, "a leader", func() error {
		for i, s := range c.servers {
			if !s.running() || (len(among) > 0 && !slices.Contains(among, i)) {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			resp, err := s.client().ListMembers(ctx, &pb.ListMembersRequest{})
			cancel()
			if err != nil {
				continue
			}
			for _, m := range resp.Members {
				if m.Leader && m.Name == c.names[i] {
					idx = i
					return nil
				}
			}
		}
		return fmt.Errorf("no member says it leads")
	})
	return idx
}

// agreedLeader waits until every running member names the same leader in
// the same term, and returns its index: unlike leader, it never answers
// with a member that still believes it leads after the others elected
// another (one that was cut off, say).
func (c *cluster) agreedLeader() int {
	c.t.Helper()
	var idx int
	waitFor(c.t, 20*time.Second, "the members to agree on a leader", func() error {
		var leader string
		var term uint64
		for i, s := range c.servers {
			if !s.running() {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			resp, err := s.client().ListMembers(ctx, &pb.ListMembersRequest{})
			cancel()
			if err != nil {
				return fmt.Errorf("%s: %v", c.names[i], err)
			}
			name := ""
			for _, m := range resp.Members {
				if m.Leader {
					name = m.Name
				}
			}
			switch {
			case name == "":
				return fmt.Errorf("%s knows no leader in term %d", c.names[i], resp.Term)
			case leader == "":
				leader, term = name, resp.Term
			case name != leader || resp.Term != term:
				return fmt.Errorf("%s says %s leads in term %d; an earlier member says %s in term %d", c.names[i], name, resp.Term, leader, term)
			}
		}
		idx = slices.Index(c.names, leader)
		return nil
	})
	return idx
}

// waitSameDigest waits until every running member reports the same schema
// digest and epoch, and returns them. It asks through ListMembers (one
// status call per member), which stays small whatever the schema size.
func (c *cluster) waitSameDigest() (string, uint64) {
	c.t.Helper()
	var digest string
	var epoch uint64
	waitFor(c.t, 60*time.Second, "equal digests", func() error {
		digest, epoch = "", 0
		running := map[string]bool{}
		var ask *server
		for i, s := range c.servers {
			if s.running() {
				running[c.names[i]] = true
				ask = s
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := ask.client().ListMembers(ctx, &pb.ListMembersRequest{})
		if err != nil {
			return err
		}
		seen := 0
		for _, m := range r.Members {
			if !running[m.Name] {
				continue
			}
			if !m.Reachable {
				return fmt.Errorf("%s unreachable: %s", m.Name, m.Error)
			}
			seen++
			if digest == "" {
				digest, epoch = m.Digest, m.Epoch
			} else if m.Digest != digest || m.Epoch != epoch {
				return fmt.Errorf("%s at epoch %d digest %.12s, others at %d %.12s", m.Name, m.Epoch, m.Digest, epoch, digest)
			}
		}
		if seen != len(running) {
			return fmt.Errorf("%d of %d running members are in the member list", seen, len(running))
		}
		return nil
	})
	return digest, epoch
}
