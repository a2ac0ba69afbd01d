//go:build metalog_faults

package member

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/metalog/metalog/raftlog"
	"github.com/metalog/metalog/raftlog/faults"
)

// This file exists only in test builds (go build -tags metalog_faults): it
// lets the integration tests partition real processes. A binary built
// without the tag has faulthook_off.go instead and takes no faults from
// its environment.

// PeerFaultsFileEnv names the environment variable a metalog_faults build
// reads at start-up: the path of the fault file its peer transport obeys.
const PeerFaultsFileEnv = "METALOG_PEER_FAULTS_FILE"

// peerFaultsPoll is how often the fault file is read again.
const peerFaultsPoll = 20 * time.Millisecond

// peerFaults is the fault injector of the peer transport: Config.peerFaults
// (this package's tests) if set, else the fault file named by
// PeerFaultsFileEnv, polled until Close, else none.
func (m *Member) peerFaults() raftlog.Faults {
	if m.cfg.peerFaults != nil {
		return m.cfg.peerFaults
	}
	path := os.Getenv(PeerFaultsFileEnv)
	if path == "" {
		return nil
	}
	m.logger.Warn("peer faults enabled: this test build drops peer messages as the fault file says (build tag metalog_faults)", "file", path)
	ff := &fileFaults{}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		ff.poll(m, path)
	}()
	return ff
}

// fileFaults is the raftlog.Faults of a fault file: the faults its last
// good content made, swapped whole so that no message sees half a change.
type fileFaults struct {
	cur atomic.Pointer[faultSet] // nil: no faults
}

// faultSet is what one content of a fault file asks for.
type faultSet struct {
	isolated map[uint64]bool // every message to or from these is dropped
	split    faults.Injector // partitions
}

// Dropped implements raftlog.Faults.
func (f *fileFaults) Dropped(from, to uint64) bool {
	s := f.cur.Load()
	return s != nil && from != to && (s.isolated[from] || s.isolated[to] || s.split.Dropped(from, to))
}

// DelayFor implements raftlog.Faults: a fault file delays nothing.
func (f *fileFaults) DelayFor(to uint64) time.Duration { return 0 }

// CorruptNextSnapshot implements raftlog.Faults: a fault file corrupts
// nothing.
func (f *fileFaults) CorruptNextSnapshot(to uint64) bool { return false }

// poll reads the file at path every peerFaultsPoll until m stops, and
// applies each new content. A missing file means no faults; an unreadable
// or garbled one is logged at WARN (once per content) and ignored, so the
// faults stay as they were.
func (f *fileFaults) poll(m *Member, path string) {
	tick := time.NewTicker(peerFaultsPoll)
	defer tick.Stop()
	applied, last, lastErr := false, "", ""
	for {
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			b, err = nil, nil
		}
		if err != nil {
			if err.Error() != lastErr {
				m.logger.Warn("peer faults: cannot read the fault file; the faults stay as they were", "file", path, "err", err)
			}
			lastErr = err.Error()
		} else if lastErr = ""; !applied || string(b) != last {
			applied, last = true, string(b)
			if set, err := parsePeerFaults(last); err != nil {
				m.logger.Warn("peer faults: garbled fault file ignored; the faults stay as they were", "file", path, "err", err)
			} else {
				f.cur.Store(set)
				m.logger.Warn("peer faults changed", "file", path, "faults", describeFaults(last))
			}
		}
		select {
		case <-m.stopc:
			return
		case <-tick.C:
		}
	}
}

// parsePeerFaults reads a fault file: one fault a line, members by name,
// blank lines and lines starting with # ignored; no fault at all is a nil
// set.
//
//	isolate n1            every message to or from n1 is dropped
//	partition n1 | n2 n3  every message between the two sides is dropped
func parsePeerFaults(text string) (*faultSet, error) {
	var s *faultSet
	for n, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if s == nil {
			s = &faultSet{isolated: map[uint64]bool{}}
		}
		switch f[0] {
		case "isolate":
			if len(f) == 1 {
				return nil, fmt.Errorf("line %d %q: isolate names no member", n+1, line)
			}
			for _, id := range memberIDs(f[1:]) {
				s.isolated[id] = true
			}
		case "partition":
			i := slices.Index(f, "|")
			if i < 0 || i == 1 || i == len(f)-1 || slices.Index(f[i+1:], "|") >= 0 {
				return nil, fmt.Errorf("line %d %q: want partition NAME... | NAME...", n+1, line)
			}
			s.split.Partition(memberIDs(f[1:i]), memberIDs(f[i+1:]))
		default:
			return nil, fmt.Errorf("line %d %q: unknown fault %q, want isolate or partition", n+1, line, f[0])
		}
	}
	return s, nil
}

// describeFaults renders a fault file's content on one line: its faults
// with single spaces, separated by "; ".
func describeFaults(text string) string {
	var lines []string
	for line := range strings.Lines(text) {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			lines = append(lines, strings.Join(f, " "))
		}
	}
	return strings.Join(lines, "; ")
}

// memberIDs maps member names to their raft ids.
func memberIDs(names []string) []uint64 {
	ids := make([]uint64, len(names))
	for i, n := range names {
		ids[i] = ID(n)
	}
	return ids
}
