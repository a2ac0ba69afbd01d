package testkit

import (
	"sync/atomic"
	"testing"
)

// TestWaitLeader: it returns once every member names the same leader
// among them and is counted; a leader outside the members, a
// disagreement or a member not counted yet keep it waiting.
func TestWaitLeader(t *testing.T) {
	var looks atomic.Int64
	views := []map[int]int{
		{1: 9, 2: 9, 3: 9}, // a leader that is none of them
		{1: 2, 2: 2, 3: 1}, // no agreement
		{1: 2, 2: 2, 3: 2}, // agreed, but 3 is not counted
		{1: 2, 2: 2, 3: 2},
	}
	got := WaitLeader(t, []int{1, 2, 3}, func(m int) (int, bool) {
		n := int(looks.Load())
		if m == 3 {
			looks.Add(1)
		}
		return views[min(n, len(views)-1)][m], n != 2 || m != 3
	})
	if got != 2 || looks.Load() != 4 {
		t.Errorf("leader %d after %d looks, want 2 after 4", got, looks.Load())
	}
}

func TestAgreedLeader(t *testing.T) {
	seen := make([]string, 2)
	if _, ok := agreedLeader([]string{"a", "b"}, func(string) (string, bool) { return "b", false }, seen); ok ||
		seen[0] != "b (not counted yet)" {
		t.Errorf("not counted: ok %v, seen %q", ok, seen)
	}
	if l, ok := agreedLeader([]string{"a", "b"}, func(string) (string, bool) { return "a", true }, seen); !ok || l != "a" {
		t.Errorf("agreed: %q %v", l, ok)
	}
	if _, ok := agreedLeader(nil, func(string) (string, bool) { return "", true }, nil); ok {
		t.Error("no members agreed")
	}
}
