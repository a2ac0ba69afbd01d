//go:build metalog_faults

package member

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/metalog/metalog/raftlog"
	"github.com/metalog/metalog/raftlog/faults"
)

// This file exists only in test builds (go build -tags metalog_faults): it
// lets the integration tests partition real processes and break the links
// between them. A binary built without the tag has faulthook_off.go
// instead and takes no faults from its environment.

// PeerFaultsFileEnv names the environment variable a metalog_faults build
// reads at start-up: the path of the fault file its peer transport obeys.
const PeerFaultsFileEnv = "METALOG_PEER_FAULTS_FILE"

// peerFaultsPoll is how often the fault file (and the membership its names
// resolve through) is read again.
const peerFaultsPoll = 20 * time.Millisecond

// peerFaults is the fault injector of the peer transport: Config.peerFaults
// (this package's tests) if set, else the fault file named by
// PeerFaultsFileEnv, else none. A fault file's injector is remembered in
// c.cfg.peerFaults, so that followFaultFile finds it once the raft node
// runs; until then it injects nothing.
func (c *core) peerFaults() raftlog.Faults {
	if c.cfg.peerFaults != nil {
		return c.cfg.peerFaults
	}
	path := os.Getenv(PeerFaultsFileEnv)
	if path == "" {
		return nil
	}
	c.logger.Warn("peer faults enabled: this test build drops and delays peer messages as the fault file says (build tag metalog_faults)", "file", path)
	ff := &fileFaults{path: path}
	c.cfg.peerFaults = ff
	return ff
}

// followFaultFile starts polling m's fault file, if it has one, until m
// stops. It runs once the raft node does, because the file names members
// and their ids are read from the node's membership: a member added by
// `cluster add` has an id that its name does not give.
func followFaultFile(m *Member) {
	ff, ok := m.core.cfg.peerFaults.(*fileFaults)
	if !ok {
		return
	}
	ff.start(&m.wg, m.stopc, m.core.logger, m.core.id, m.core.node.Members)
}

// fileFaults is the raftlog.Faults of a fault file: the faults its last
// good content made, with names resolved through the membership, swapped
// whole so that no message sees half a change.
type fileFaults struct {
	path string
	cur  atomic.Pointer[faultSet] // nil: no faults
}

// faultSet is what one content of a fault file asks for, in member ids.
type faultSet struct {
	isolated map[uint64]bool // every message to or from these is dropped
	// links holds the partitions and the dropped links (both sides apply
	// them: the sender drops, and so does the receiver) and the delays of
	// the links from this member (only the sender delays).
	links faults.Injector
}

// Dropped implements raftlog.Faults.
func (f *fileFaults) Dropped(from, to uint64) bool {
	s := f.cur.Load()
	return s != nil && from != to && (s.isolated[from] || s.isolated[to] || s.links.Dropped(from, to))
}

// DelayFor implements raftlog.Faults: the delay of the link from this
// member to member to.
func (f *fileFaults) DelayFor(to uint64) time.Duration {
	if s := f.cur.Load(); s != nil {
		return s.links.DelayFor(to)
	}
	return 0
}

// CorruptNextSnapshot implements raftlog.Faults: a fault file corrupts
// nothing.
func (f *fileFaults) CorruptNextSnapshot(to uint64) bool { return false }

// start polls the fault file in a goroutine counted in wg until stop is
// closed. self is this member's id; members returns the current
// membership, which names resolve through.
func (f *fileFaults) start(wg *sync.WaitGroup, stop <-chan struct{}, logger *slog.Logger, self uint64, members func() []raftlog.Peer) {
	p := &faultPoller{f: f, logger: logger, self: self, members: members}
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(peerFaultsPoll)
		defer tick.Stop()
		for {
			p.step()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
}

// faultPoller is the state of the goroutine that polls a fault file.
type faultPoller struct {
	f       *fileFaults
	logger  *slog.Logger
	self    uint64
	members func() []raftlog.Peer

	read    bool              // a content was read (a missing file reads as "")
	text    string            // the last content read
	lastErr string            // the last read error, logged once
	spec    faultSpec         // the faults of the last good content
	ids     map[string]uint64 // the ids spec's names resolved to
}

// step reads the fault file and the membership once and applies what
// changed. A missing file means no faults; an unreadable or garbled one is
// logged at WARN (once per content) and ignored, so the faults stay as
// they were. A change of the ids the names resolve to (a member removed,
// another added under the same name) re-resolves the faults in force.
func (p *faultPoller) step() {
	b, err := os.ReadFile(p.f.path)
	if errors.Is(err, fs.ErrNotExist) {
		b, err = nil, nil
	}
	if err != nil {
		if err.Error() != p.lastErr {
			p.logger.Warn("peer faults: cannot read the fault file; the faults stay as they were", "file", p.f.path, "err", err)
		}
		p.lastErr = err.Error()
		return
	}
	p.lastErr = ""
	changed := !p.read || string(b) != p.text
	if changed {
		p.read, p.text = true, string(b)
		spec, err := parsePeerFaults(p.text)
		if err != nil {
			p.logger.Warn("peer faults: garbled fault file ignored; the faults stay as they were", "file", p.f.path, "err", err)
			changed = false
		} else {
			p.spec = spec
		}
	}
	ids := resolveNames(p.spec.names(), p.members())
	if !changed && maps.Equal(ids, p.ids) {
		return
	}
	p.ids = ids
	p.f.cur.Store(p.spec.resolve(p.self, ids))
	if changed {
		p.logger.Warn("peer faults changed", "file", p.f.path, "faults", describeFaults(p.text), "ids", describeIDs(ids))
	} else {
		p.logger.Warn("peer faults: the members named have other ids now; the faults follow them", "faults", describeFaults(p.text), "ids", describeIDs(ids))
	}
}

// faultSpec is a parsed fault file: its faults in order, members by name.
type faultSpec []faultLine

// faultLine is one fault of a fault file.
type faultLine struct {
	kind string // "isolate", "partition", "drop" or "delay"
	// a are the members isolated, or one side of a partition, or the
	// sender of a dropped or delayed link; b the other side, or the
	// receiver.
	a, b  []string
	delay time.Duration // of a delay
}

// parsePeerFaults reads a fault file: one fault a line, members by name,
// blank lines and lines starting with # ignored; no fault at all is an
// empty spec.
//
//	isolate n1            every message to or from n1 is dropped
//	partition n1 | n2 n3  every message between the two sides is dropped
//	drop n1 n2            every message n1 sends to n2 is dropped (one
//	                      way: write "drop n2 n1" too to cut both)
//	delay n1 n2 200ms     every batch of messages (and every snapshot) n1
//	                      sends to n2 is held 200ms first (one way)
func parsePeerFaults(text string) (faultSpec, error) {
	var spec faultSpec
	for n, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		fl, err := parseFaultLine(f)
		if err != nil {
			return nil, fmt.Errorf("line %d %q: %w", n+1, line, err)
		}
		spec = append(spec, fl)
	}
	return spec, nil
}

// parseFaultLine reads the fields of one line of a fault file.
func parseFaultLine(f []string) (faultLine, error) {
	fl := faultLine{kind: f[0]}
	switch f[0] {
	case "isolate":
		if len(f) == 1 {
			return fl, errors.New("isolate names no member")
		}
		fl.a = f[1:]
	case "partition":
		i := slices.Index(f, "|")
		if i < 0 || i == 1 || i == len(f)-1 || slices.Index(f[i+1:], "|") >= 0 {
			return fl, errors.New("want partition NAME... | NAME...")
		}
		fl.a, fl.b = f[1:i], f[i+1:]
	case "drop", "delay":
		want := map[string]string{"drop": "drop FROM TO", "delay": "delay FROM TO DURATION (200ms, say)"}[f[0]]
		if n := map[string]int{"drop": 3, "delay": 4}[f[0]]; len(f) != n || f[1] == f[2] {
			return fl, fmt.Errorf("want %s, two different members", want)
		}
		fl.a, fl.b = f[1:2], f[2:3]
		if f[0] == "delay" {
			d, err := time.ParseDuration(f[3])
			if err != nil || d <= 0 {
				return fl, fmt.Errorf("delay %q: want %s, a positive duration", f[3], want)
			}
			fl.delay = d
		}
	default:
		return fl, fmt.Errorf("unknown fault %q, want isolate, partition, drop or delay", f[0])
	}
	return fl, nil
}

// names lists every member name the spec mentions.
func (s faultSpec) names() []string {
	var names []string
	for _, fl := range s {
		names = append(names, fl.a...)
		names = append(names, fl.b...)
	}
	return names
}

// resolve turns the spec into the faults of member self, with names as
// ids says (memberIDs); nil when the spec has no fault. Only the delays
// of links from self are kept: the sender delays.
func (s faultSpec) resolve(self uint64, ids map[string]uint64) *faultSet {
	if len(s) == 0 {
		return nil
	}
	set := &faultSet{isolated: map[uint64]bool{}}
	for _, fl := range s {
		a, b := memberIDs(fl.a, ids), memberIDs(fl.b, ids)
		switch fl.kind {
		case "isolate":
			for _, id := range a {
				set.isolated[id] = true
			}
		case "partition":
			set.links.Partition(a, b)
		case "drop":
			set.links.Drop(a[0], b[0])
		case "delay":
			if a[0] == self {
				set.links.Delay(b[0], fl.delay)
			}
		}
	}
	return set
}

// resolveNames maps each of names to the id of the member of that name in
// members (whose contexts record names); a name no member has is left out.
func resolveNames(names []string, members []raftlog.Peer) map[string]uint64 {
	ids := map[string]uint64{}
	for _, p := range members {
		info, err := parseMemberInfo(p.Context)
		if err == nil && slices.Contains(names, info.Name) {
			ids[info.Name] = p.ID
		}
	}
	return ids
}

// memberIDs maps member names to their raft ids: the id ids gives a name
// (the membership's), else the id a founding member of that name has
// (ID), which is right for a name not in the membership yet.
func memberIDs(names []string, ids map[string]uint64) []uint64 {
	out := make([]uint64, len(names))
	for i, n := range names {
		if id, ok := ids[n]; ok {
			out[i] = id
		} else {
			out[i] = ID(n)
		}
	}
	return out
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

// describeIDs renders the ids names resolved to, "n1=8b37b07b558d4c0 ...",
// sorted by name; names not in the membership are not listed.
func describeIDs(ids map[string]uint64) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(ids)) {
		parts = append(parts, name+"="+FormatID(ids[name]))
	}
	return strings.Join(parts, " ")
}
