package raftlog

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

const (
	// sourceWindow is how often one source host's line is logged loud:
	// its repeats are counted and summarised in one line when the window
	// ends.
	sourceWindow = time.Minute
	// sourceLoudHosts bounds the hosts logged loud in one window: the
	// lines of further hosts are counted together, in one summary line.
	sourceLoudHosts = 16
	// sourceOthersKept bounds the further hosts counted by name in one
	// window, to say from how many hosts their lines came.
	sourceOthersKept = 256
)

// sourceLog decides which lines about connections from a source host are
// logged loud (WARN): the first of each host in a window of sourceWindow,
// for at most sourceLoudHosts hosts. A host is an address without its
// port: a peer, or an attacker, opens every connection from another port.
// The lines held back are counted, and said when the window ends, at
// WARN: "12 more failed handshakes from 10.0.0.7 in the last minute", and
// one line for all the hosts past sourceLoudHosts. What it remembers is
// bounded whatever the number of hosts. Its methods are safe for
// concurrent use.
type sourceLog struct {
	log  *slog.Logger
	what string           // the lines counted, in the plural: "failed handshakes"
	now  func() time.Time // the clock of the windows

	mu     sync.Mutex          // guards the fields below
	end    time.Time           // end of the open window; zero: none open
	loud   map[string]int      // hosts logged loud in the window -> lines held back since
	others map[string]struct{} // further hosts of the window, at most sourceOthersKept
	otherN int                 // lines of further hosts in the window
	timer  *time.Timer         // ends the open window
	closed bool
}

// newSourceLog returns a sourceLog of the lines called what, summarised
// to log.
func newSourceLog(log *slog.Logger, what string) *sourceLog {
	return &sourceLog{log: log, what: what, now: time.Now, loud: make(map[string]int), others: make(map[string]struct{})}
}

// sourceSummary is one summary line: n lines held back of host, or of
// hosts further hosts (host empty).
type sourceSummary struct {
	host  string
	hosts int
	full  bool // more further hosts than were counted by name
	n     int
}

// note counts one line about host and reports whether the caller logs it
// loud (WARN); if not, it logs it quietly (DEBUG) or not at all.
func (s *sourceLog) note(host string) bool {
	now := s.now()
	s.mu.Lock()
	var due []sourceSummary
	if !s.end.IsZero() && !now.Before(s.end) {
		due = s.endWindowLocked()
	}
	if s.end.IsZero() {
		s.end = now.Add(sourceWindow)
		if s.timer == nil && !s.closed {
			s.timer = time.AfterFunc(sourceWindow, s.tick)
		}
	}
	loud := false
	switch n, ok := s.loud[host]; {
	case ok:
		s.loud[host] = n + 1
	case len(s.loud) < sourceLoudHosts:
		s.loud[host] = 0
		loud = true
	default:
		if len(s.others) < sourceOthersKept {
			s.others[host] = struct{}{}
		}
		s.otherN++
	}
	s.mu.Unlock()
	s.emit(due)
	return loud
}

// tick runs on the timer: it ends the window once it is over, and waits
// again otherwise.
func (s *sourceLog) tick() {
	now := s.now()
	s.mu.Lock()
	s.timer = nil
	var due []sourceSummary
	switch {
	case s.end.IsZero():
	case !now.Before(s.end):
		due = s.endWindowLocked()
	case !s.closed:
		s.timer = time.AfterFunc(s.end.Sub(now), s.tick)
	}
	s.mu.Unlock()
	s.emit(due)
}

// close ends the open window, saying what it held back, and stops the
// timer. Lines noted after close are still counted, but summarised only
// at a later note.
func (s *sourceLog) close() {
	s.mu.Lock()
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	due := s.endWindowLocked()
	s.mu.Unlock()
	s.emit(due)
}

// endWindowLocked closes the open window and returns its summaries, the
// hosts in order.
func (s *sourceLog) endWindowLocked() []sourceSummary {
	var due []sourceSummary
	for host, n := range s.loud {
		if n > 0 {
			due = append(due, sourceSummary{host: host, n: n})
		}
	}
	slices.SortFunc(due, func(a, b sourceSummary) int { return strings.Compare(a.host, b.host) })
	if s.otherN > 0 {
		due = append(due, sourceSummary{hosts: len(s.others), full: len(s.others) >= sourceOthersKept, n: s.otherN})
	}
	clear(s.loud)
	clear(s.others)
	s.otherN = 0
	s.end = time.Time{}
	return due
}

// emit logs the summaries, outside the lock.
func (s *sourceLog) emit(due []sourceSummary) {
	for _, d := range due {
		if d.host != "" {
			s.log.Warn(fmt.Sprintf("%d more %s from %s in the last minute", d.n, s.what, d.host), "source", d.host, "count", d.n)
			continue
		}
		hosts := fmt.Sprint(d.hosts)
		if d.full {
			hosts = "at least " + hosts
		}
		s.log.Warn(fmt.Sprintf("%d more %s from %s other hosts in the last minute", d.n, s.what, hosts), "hosts", hosts, "count", d.n)
	}
}
