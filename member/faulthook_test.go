//go:build metalog_faults

package member

import (
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/metalog/metalog/raftlog"
)

// These tests run only in the test build: go test -tags metalog_faults.

// checkDropped fails unless f drops exactly the pairs of ids in dropped
// among every ordered pair of ids.
func checkDropped(t *testing.T, what string, f *fileFaults, ids []uint64, dropped [][2]uint64) {
	t.Helper()
	for _, from := range ids {
		for _, to := range ids {
			want := false
			for _, d := range dropped {
				want = want || d == [2]uint64{from, to}
			}
			if got := f.Dropped(from, to); got != want {
				t.Errorf("%s: Dropped(%x, %x) = %v, want %v", what, from, to, got, want)
			}
		}
	}
}

func TestParsePeerFaults(t *testing.T) {
	n1, n2, n3 := ID("n1"), ID("n2"), ID("n3")
	for _, tc := range []struct {
		text    string
		dropped [][2]uint64 // every other pair of n1..n3 is not
		delays  map[uint64]time.Duration
	}{
		{"", nil, nil},
		{"\n  \n# comment\n", nil, nil},
		{"isolate n1", [][2]uint64{{n1, n2}, {n2, n1}, {n1, n3}, {n3, n1}}, nil},
		{"partition n2 | n1 n3\n", [][2]uint64{{n2, n1}, {n1, n2}, {n2, n3}, {n3, n2}}, nil},
		{"partition n1 n2 | n3", [][2]uint64{{n1, n3}, {n3, n1}, {n2, n3}, {n3, n2}}, nil},
		{"isolate n3\npartition n1 | n2", [][2]uint64{{n1, n2}, {n2, n1}, {n1, n3}, {n3, n1}, {n2, n3}, {n3, n2}}, nil},
		{"drop n1 n2", [][2]uint64{{n1, n2}}, nil},
		{"drop n2 n3\ndrop n3 n2", [][2]uint64{{n2, n3}, {n3, n2}}, nil},
		// This member is n1: it delays what it sends; what n2 sends, n2
		// delays.
		{"delay n1 n2 200ms\ndelay n2 n3 1s\ndelay n1 n3 5ms", nil, map[uint64]time.Duration{n2: 200 * time.Millisecond, n3: 5 * time.Millisecond}},
		{"delay n2 n1 50ms\ndrop n3 n1", [][2]uint64{{n3, n1}}, nil},
	} {
		spec, err := parsePeerFaults(tc.text)
		if err != nil {
			t.Errorf("%q: %v", tc.text, err)
			continue
		}
		set := spec.resolve(n1, nil)
		if (set == nil) != (len(tc.dropped) == 0 && len(tc.delays) == 0) {
			t.Errorf("%q: set %v, want nil only for no faults", tc.text, set)
		}
		ff := &fileFaults{}
		ff.cur.Store(set)
		checkDropped(t, tc.text, ff, []uint64{n1, n2, n3}, tc.dropped)
		for _, to := range []uint64{n1, n2, n3} {
			if got := ff.DelayFor(to); got != tc.delays[to] {
				t.Errorf("%q: DelayFor(%x) = %v, want %v", tc.text, to, got, tc.delays[to])
			}
		}
	}
	for _, text := range []string{"isolate", "partition n1 n2", "partition | n1", "partition n1 |", "partition n1 | n2 | n3",
		"drop n1", "drop n1 n2 n3", "drop n1 n1", "delay n1 n2", "delay n1 n2 fast", "delay n1 n2 -5ms", "delay n1 n2 0s",
		"delay n1 n1 5ms", "cut n1 n2", "isolate n1\ndrop n2"} {
		if _, err := parsePeerFaults(text); err == nil {
			t.Errorf("%q: no error", text)
		}
	}
}

// TestPeerFaultsResolveThroughMembership: a name in the membership is the
// member the membership gives it (a member added by cluster add has an id
// its name does not give), a name not in it is the founding member of
// that name, and a delay is this member's only when it sends.
func TestPeerFaultsResolveThroughMembership(t *testing.T) {
	n1, n2, n3 := ID("n1"), ID("n2"), ID("n3")
	const n3again = 0xfeed // n3 removed, then added again under a new id
	members := []raftlog.Peer{
		{ID: n1, Context: memberInfo{Name: "n1", PeerAddr: "127.0.0.1:1"}.marshal()},
		{ID: n3again, Context: memberInfo{Name: "n3", PeerAddr: "127.0.0.1:3"}.marshal(), Learner: true},
		{ID: 77, Context: []byte("not json")},
	}
	spec, err := parsePeerFaults("drop n1 n3\ndrop n2 n1\ndelay n3 n1 30ms\ndelay n1 n3 40ms")
	if err != nil {
		t.Fatal(err)
	}
	ids := resolveNames(spec.names(), members)
	if want := map[string]uint64{"n1": n1, "n3": n3again}; len(ids) != len(want) || ids["n1"] != n1 || ids["n3"] != n3again {
		t.Fatalf("resolveNames = %v, want %v", ids, want)
	}
	ff := &fileFaults{}
	ff.cur.Store(spec.resolve(n1, ids))
	checkDropped(t, "as n1", ff, []uint64{n1, n2, n3, n3again}, [][2]uint64{{n1, n3again}, {n2, n1}})
	if d := ff.DelayFor(n3again); d != 40*time.Millisecond {
		t.Errorf("n1's delay to n3 (id %x) = %v, want 40ms", uint64(n3again), d)
	}
	if d := ff.DelayFor(n3); d != 0 {
		t.Errorf("delay to the removed n3's id = %v, want none", d)
	}
	ff.cur.Store(spec.resolve(n3again, ids))
	if d := ff.DelayFor(n1); d != 30*time.Millisecond {
		t.Errorf("the new n3's delay to n1 = %v, want 30ms", d)
	}
}

// TestFaultFilePolled: a member of the test build obeys its fault file as
// it changes, keeps its faults when the file becomes garbled (and says so
// at WARN), follows a member to its new id when the membership changes
// under the same name, has no faults once the file is gone, and stops
// polling on Close (TestMain checks for leaked goroutines).
func TestFaultFilePolled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "faults")
	t.Setenv(PeerFaultsFileEnv, path)
	var logs logBuffer
	m := &Member{stopc: make(chan struct{}), core: &core{logger: slog.New(slog.NewTextHandler(&logs, nil))}}
	f := m.core.peerFaults()
	if len(logs.lines("peer faults enabled")) != 1 {
		t.Errorf("no WARN that peer faults are enabled: %q", logs.lines(""))
	}
	if again := m.core.peerFaults(); again != f {
		t.Fatalf("a second peerFaults made another injector: %p, want %p", again, f)
	}
	n1, n2, n3 := ID("n1"), ID("n2"), ID("n3")
	const n3again = 0xbeef
	peer := func(id uint64, name string) raftlog.Peer {
		return raftlog.Peer{ID: id, Context: memberInfo{Name: name, PeerAddr: "127.0.0.1:0"}.marshal()}
	}
	var members atomic.Pointer[[]raftlog.Peer]
	members.Store(&[]raftlog.Peer{peer(n1, "n1"), peer(n2, "n2"), peer(n3, "n3")})
	f.(*fileFaults).start(&m.wg, m.stopc, m.core.logger, n1, func() []raftlog.Peer { return *members.Load() })
	defer func() {
		close(m.stopc)
		m.wg.Wait()
	}()
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(path+".tmp", []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			t.Fatal(err)
		}
	}
	waitDropped := func(from, to uint64, want bool, what string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for f.Dropped(from, to) != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: Dropped(%x, %x) still %v", what, from, to, !want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	write("isolate n1")
	waitDropped(n1, n2, true, "after isolate n1")
	write("isolate")
	deadline := time.Now().Add(10 * time.Second)
	for len(logs.lines("garbled fault file ignored")) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("a garbled file logged no WARN: %q", logs.lines(""))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !f.Dropped(n1, n2) {
		t.Error("a garbled file healed the faults")
	}

	write("drop n1 n3")
	waitDropped(n1, n3, true, "after drop n1 n3")
	waitDropped(n1, n2, false, "after drop n1 n3 replaced isolate n1")
	// n3 removed and added again: the same name, another id.
	members.Store(&[]raftlog.Peer{peer(n1, "n1"), peer(n2, "n2"), peer(n3again, "n3")})
	waitDropped(n1, n3again, true, "after n3 came back under a new id")
	if f.Dropped(n1, n3) {
		t.Error("the removed n3's id is still cut off after the name moved to another id")
	}
	if len(logs.lines("the faults follow them")) == 0 {
		t.Errorf("no WARN that the faults follow the new ids: %q", logs.lines(""))
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	waitDropped(n1, n3again, false, "after the file was removed")
}
