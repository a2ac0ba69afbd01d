//go:build metalog_faults

package member

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// These tests run only in the test build: go test -tags metalog_faults.

func TestParsePeerFaults(t *testing.T) {
	n1, n2, n3 := ID("n1"), ID("n2"), ID("n3")
	for _, tc := range []struct {
		text    string
		dropped [][2]uint64 // every other pair of n1..n3 is not
	}{
		{"", nil},
		{"\n  \n# comment\n", nil},
		{"isolate n1", [][2]uint64{{n1, n2}, {n2, n1}, {n1, n3}, {n3, n1}}},
		{"partition n2 | n1 n3\n", [][2]uint64{{n2, n1}, {n1, n2}, {n2, n3}, {n3, n2}}},
		{"partition n1 n2 | n3", [][2]uint64{{n1, n3}, {n3, n1}, {n2, n3}, {n3, n2}}},
		{"isolate n3\npartition n1 | n2", [][2]uint64{{n1, n2}, {n2, n1}, {n1, n3}, {n3, n1}, {n2, n3}, {n3, n2}}},
	} {
		set, err := parsePeerFaults(tc.text)
		if err != nil {
			t.Errorf("%q: %v", tc.text, err)
			continue
		}
		if (set == nil) != (len(tc.dropped) == 0) {
			t.Errorf("%q: set %v, want nil only for no faults", tc.text, set)
		}
		ff := &fileFaults{}
		ff.cur.Store(set)
		for _, from := range []uint64{n1, n2, n3} {
			for _, to := range []uint64{n1, n2, n3} {
				want := false
				for _, d := range tc.dropped {
					want = want || d == [2]uint64{from, to}
				}
				if got := ff.Dropped(from, to); got != want {
					t.Errorf("%q: Dropped(%x, %x) = %v, want %v", tc.text, from, to, got, want)
				}
			}
		}
	}
	for _, text := range []string{"isolate", "partition n1 n2", "partition | n1", "partition n1 |", "partition n1 | n2 | n3", "drop n1 n2"} {
		if _, err := parsePeerFaults(text); err == nil {
			t.Errorf("%q: no error", text)
		}
	}
}

// TestFaultFilePolled: a member of the test build obeys its fault file as
// it changes, keeps its faults when the file becomes garbled (and says so
// at WARN), has none once the file is gone, and stops polling on Close
// (TestMain checks for leaked goroutines).
func TestFaultFilePolled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "faults")
	t.Setenv(PeerFaultsFileEnv, path)
	var logs logBuffer
	m := &Member{stopc: make(chan struct{}), membership: &membership{logger: slog.New(slog.NewTextHandler(&logs, nil))}}
	f := m.peerFaults()
	defer func() {
		close(m.stopc)
		m.wg.Wait()
	}()
	if len(logs.lines("peer faults enabled")) != 1 {
		t.Errorf("no WARN that peer faults are enabled: %q", logs.lines(""))
	}
	n1, n2 := ID("n1"), ID("n2")
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(path+".tmp", []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			t.Fatal(err)
		}
	}
	waitDropped := func(want bool, what string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for f.Dropped(n1, n2) != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: Dropped(n1, n2) still %v", what, !want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	write("isolate n1")
	waitDropped(true, "after isolate n1")
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
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	waitDropped(false, "after the file was removed")
}
