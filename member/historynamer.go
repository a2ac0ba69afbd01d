package member

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
)

// namingNode is what a historyNamer needs of the raft node: whether this
// member leads and has applied its term's first entries, and a way to
// put the mark in the log. *raftlog.Node is one.
type namingNode interface {
	Status() raftlog.Status
	Caught() bool
	Propose(ctx context.Context, data []byte) (any, error)
}

// namingPoll is how often a member whose cluster's history has no name
// yet checks whether it leads now: a leader change publishes nothing the
// namer could wait on. Once the history is named it no longer polls.
const namingPoll = 50 * time.Millisecond

// followerNamingGrace is how long a member that may name the history
// (its data dir began it) and follows, caught up, waits for its leader to
// name it before it proposes a name itself (forwarded to the leader; the
// first applied wins). A leader that began the history names it within
// moments of its election; one that joined the cluster (it waits for the
// name, never proposes one) would otherwise leave the cluster without a
// name, and not ready, until a founding member leads.
const followerNamingGrace = 2 * time.Second

// historyNamer gives the member its Identity from the history name the
// log applied (metadata.HistoryName) and what its data dir records about
// naming (raftlog.HistoryNaming), and names its cluster's history when
// the data dir began that history (a bootstrap, a restore, a forced new
// cluster: raftlog.NamingBegun), the member leads and the applied state
// has no name for its cluster id. A follower that began it names it too
// when its leader has not within a grace (a leader that joined never
// does). A member that joined a named cluster (raftlog.NamingExpected)
// waits for the name; a member of a cluster begun before history names
// (raftlog.NamingNone) never proposes one and answers the id derived from
// its cluster id (IdentityOf).
// The name is a random nonce proposed through the log
// (metadata.KindNameHistory): the first applied wins, so two proposers
// agree, and every member derives the same history id from it.
type historyNamer struct {
	// cluster is the member's cluster id, fixed while it runs.
	cluster uint64
	// naming is what the data dir records about naming the history,
	// fixed while the member runs.
	naming raftlog.HistoryNaming
	sm     *metadata.StateMachine
	node   namingNode
	logger *slog.Logger
	// timeout bounds one proposal (Config.RequestTimeout).
	timeout time.Duration
	// hold, when not nil, keeps the namer from proposing until it is
	// closed (tests see a member before its history is named).
	hold <-chan struct{}
	// grace is how long a caught-up follower waits for the leader to name
	// the history before proposing a name itself; 0 means
	// followerNamingGrace.
	grace time.Duration
	// last is the identity made from the last history name read, so that
	// the hash is made once per name, not once per response.
	last atomic.Pointer[namedIdentity]
}

// namedIdentity is the identity made from one history name.
type namedIdentity struct {
	name metadata.HistoryName
	id   Identity
}

// identity is the member's identity as of the applied state: a HistoryID
// of 0 until the history of its cluster is named, when it names one. It
// never blocks.
func (h *historyNamer) identity() Identity {
	name := h.sm.Current().History
	if c := h.last.Load(); c != nil && c.name == name {
		return c.id
	}
	id := IdentityOf(h.cluster, name, h.naming)
	h.last.Store(&namedIdentity{name: name, id: id})
	return id
}

// named reports whether the member has a history id: its cluster's
// history is named, or its cluster does not name it.
func (h *historyNamer) named() bool { return h.identity().HistoryID != 0 }

// namesHistory reports whether a member's cluster names its history
// through the log (ListMembers' history_named): its data dir began a
// named history or joined one (naming), or its applied state holds a
// name (name), its cluster's or, after a restore or a forcing, the old
// cluster's. A cluster begun before history names holds none.
func namesHistory(naming raftlog.HistoryNaming, name metadata.HistoryName) bool {
	return naming != raftlog.NamingNone || name.Nonce != 0
}

// run names the history when it has to, until stop is closed: while the
// history is named it waits for the next publish (a snapshot restore or a
// rebuild could replace the state), and otherwise, when the data dir
// began the history, proposes a name each time it finds the member
// leading and caught up, or following, caught up, past the grace, trying
// again while no name applied. A member that may not name the history
// only logs its history id once it has one.
func (h *historyNamer) run(stop <-chan struct{}) {
	if h.hold != nil {
		select {
		case <-h.hold:
		case <-stop:
			return
		}
	}
	poll := time.NewTimer(namingPoll)
	defer poll.Stop()
	var said uint64            // the history id last logged
	var unnamedSince time.Time // when this member, caught up, first found no name; zero: named
	for {
		changed := h.sm.Changed() // before reading the state: no publish is missed
		var tick <-chan time.Time
		if id := h.identity(); id.HistoryID != 0 && id.HistoryID != said {
			said = id.HistoryID
			h.logNamed(said)
		}
		switch {
		case h.named():
			unnamedSince = time.Time{}
		case h.naming == raftlog.NamingBegun:
			if unnamedSince.IsZero() && h.node.Caught() {
				unnamedSince = time.Now()
			}
			if h.leading() || (!unnamedSince.IsZero() && h.node.Caught() && time.Since(unnamedSince) >= h.graceOrDefault()) {
				h.propose(stop)
				continue
			}
			poll.Reset(namingPoll)
			tick = poll.C
		}
		select {
		case <-changed:
			// Named, only a restore or a rebuild could take the name
			// away: look again at most once a poll, so that a stream of
			// DDL does not wake this goroutine for each one.
			if h.named() && !h.pause(poll, stop) {
				return
			}
		case <-tick:
		case <-stop:
			return
		}
	}
}

// pause waits namingPoll on poll, which must be stopped and drained;
// false if stop was closed first.
func (h *historyNamer) pause(poll *time.Timer, stop <-chan struct{}) bool {
	poll.Reset(namingPoll)
	select {
	case <-poll.C:
		return true
	case <-stop:
		return false
	}
}

// logNamed says once which history id the member answers with from now
// on, and why.
func (h *historyNamer) logNamed(id uint64) {
	if h.naming == raftlog.NamingNone && !h.sm.Current().History.Names(h.cluster) {
		h.logger.Info("this cluster was begun before clusters named their histories: its history id is derived from its cluster id, as before, and never changes",
			"cluster", FormatID(h.cluster), "history", FormatHistoryID(id))
		return
	}
	h.logger.Info("the cluster's history is named; every response carries its history id", "cluster", FormatID(h.cluster), "history", FormatHistoryID(id))
}

// graceOrDefault is the follower's grace: h.grace, or
// followerNamingGrace.
func (h *historyNamer) graceOrDefault() time.Duration {
	if h.grace > 0 {
		return h.grace
	}
	return followerNamingGrace
}

// leading reports whether this member leads and has applied the entries
// of its term's start: only then does it know that no name applied
// before it.
func (h *historyNamer) leading() bool {
	st := h.node.Status()
	return st.Leader != 0 && st.Leader == st.ID && h.node.Caught()
}

// propose proposes a new name and waits for it to apply (or another one
// to win), for at most the timeout; a failure is logged and, after a
// pause, tried again by run.
func (h *historyNamer) propose(stop <-chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	cmd := metadata.Command{Kind: metadata.KindNameHistory, Cluster: h.cluster, Nonce: newNonce()}
	h.logger.Info("proposing a name for the cluster's history", "cluster", FormatID(h.cluster))
	_, err := h.node.Propose(ctx, cmd.Marshal(nil))
	if err == nil {
		return
	}
	h.logger.Warn("could not name the cluster's history; trying again while it has no name", "cluster", FormatID(h.cluster), "err", err)
	pause := time.NewTimer(namingPoll)
	defer pause.Stop()
	select {
	case <-pause.C:
	case <-stop:
	}
}

// newNonce returns a random nonce, never 0.
func newNonce() uint64 {
	var b [8]byte
	for {
		// crypto/rand.Read never fails (it panics if the system's source
		// does).
		_, _ = rand.Read(b[:])
		if n := binary.BigEndian.Uint64(b[:]); n != 0 {
			return n
		}
	}
}
