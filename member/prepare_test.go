package member

import (
	"fmt"
	"testing"
	"time"
)

// TestOneExecutionPerDDL counts how each member got the result of each
// DDL: the member a client sent it to takes the result its pre-check
// made, and every other member executes it once, on apply; the member
// that took the request never executes it again.
func TestOneExecutionPerDDL(t *testing.T) {
	c := startTestCluster(t, 3)
	leader := c.waitLeader(0, 1, 2)
	follower := (leader + 1) % 3
	if _, err := c.exec(leader, 10*time.Second, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}"); err != nil {
		t.Fatal(err)
	}
	c.waitSameSchema()
	before := make([][2]uint64, 3)
	for i, m := range c.members {
		before[i][0], before[i][1] = m.core.expected.Counts()
	}
	// One writer at a time, as a client sends them: each DDL is
	// prepared on the state it applies on. (A DDL sent to a member that
	// has not applied the one before it yet is executed again.)
	const n = 20
	for _, to := range []int{leader, follower} {
		for i := range n {
			if _, err := c.exec(to, 10*time.Second, fmt.Sprintf("CREATE TABLE ks.t%d_%d (id int PRIMARY KEY)", to, i)); err != nil {
				t.Fatal(err)
			}
		}
		c.waitSameSchema()
	}
	for i, m := range c.members {
		used, executed := m.core.expected.Counts()
		used, executed = used-before[i][0], executed-before[i][1]
		want := [2]uint64{0, 2 * n}
		if i == leader || i == follower {
			want = [2]uint64{n, n}
		}
		if [2]uint64{used, executed} != want {
			t.Errorf("member %d (leader %d, follower sent DDL %d): %d prepared results used, %d executed on apply; want %d and %d",
				i, leader, follower, used, executed, want[0], want[1])
		}
	}
}
