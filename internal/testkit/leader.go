package testkit

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// WaitTimeout is how long WaitLeader waits: long enough for an election
// on a loaded machine, short enough that a cluster without a leader fails
// its test well within the test's own timeout.
const WaitTimeout = 20 * time.Second

// WaitLeader waits until every one of members takes the same member for
// the leader, itself one of members, and returns it; after WaitTimeout it
// fails t, saying what each member took for the leader at the last look.
// leaderOf returns whom m takes for the leader, with ok false while m is
// not to be counted yet (it has not caught up, say).
func WaitLeader[M comparable](t testing.TB, members []M, leaderOf func(m M) (leader M, ok bool)) M {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	seen := make([]string, len(members))
	for {
		leader, agreed := agreedLeader(members, leaderOf, seen)
		if agreed {
			return leader
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for members %v to agree on a leader among them; each took for the leader: %v",
				WaitTimeout, members, seen)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// agreedLeader looks once, noting in seen what each member said.
func agreedLeader[M comparable](members []M, leaderOf func(M) (M, bool), seen []string) (M, bool) {
	var first M
	agreed := len(members) > 0
	for i, m := range members {
		leader, ok := leaderOf(m)
		seen[i] = fmt.Sprint(leader)
		if !ok {
			seen[i] += " (not counted yet)"
		}
		if i == 0 {
			first = leader
		}
		agreed = agreed && ok && leader == first
	}
	return first, agreed && slices.Contains(members, first)
}
