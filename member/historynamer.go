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

// followerNamingGrace is how long a member that follows, caught up, waits
// for its leader to name the history before it proposes a name itself
// (forwarded to the leader; the first applied wins). A leader of this
// build names it within moments of its election; one of an older build,
// during a rolling upgrade, never does, and without this the members of
// this build would stay not ready until one of them leads.
const followerNamingGrace = 2 * time.Second

// historyNamer gives the member its Identity from the history name the
// log applied (metadata.HistoryName), and names its cluster's history
// when the member leads and the applied state has no name for its
// cluster id: a fresh bootstrap, a restore (the backup's name is the old
// cluster's), a forced new cluster, a data dir from before history names.
// A follower names it too when its leader has not within a grace (a
// leader of an older build never does).
// The name is a random nonce proposed through the log
// (metadata.KindNameHistory): the first applied wins, so two leaders
// proposing at once agree, and every member derives the same history id
// from it.
type historyNamer struct {
	// cluster is the member's cluster id, fixed while it runs.
	cluster uint64
	sm      *metadata.StateMachine
	node    namingNode
	logger  *slog.Logger
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
// of 0 until the history of its cluster is named. It never blocks.
func (h *historyNamer) identity() Identity {
	name := h.sm.Current().History
	if c := h.last.Load(); c != nil && c.name == name {
		return c.id
	}
	id := IdentityOf(h.cluster, name)
	h.last.Store(&namedIdentity{name: name, id: id})
	return id
}

// named reports whether the applied state names the cluster's history.
func (h *historyNamer) named() bool { return h.sm.Current().History.Names(h.cluster) }

// run names the history when it has to, until stop is closed: while the
// history is named it waits for the next publish (a snapshot restore or a
// rebuild could replace the state), and otherwise proposes a name each
// time it finds the member leading and caught up, or following, caught
// up, past the grace, trying again while no name applied.
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
			h.logger.Info("the cluster's history is named; every response carries its history id", "cluster", FormatClusterID(h.cluster), "history", FormatHistoryID(said))
		}
		if h.named() {
			unnamedSince = time.Time{}
		} else {
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
		case <-tick:
		case <-stop:
			return
		}
	}
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
	_, err := h.node.Propose(ctx, cmd.Marshal(nil))
	if err == nil {
		return
	}
	h.logger.Warn("could not name the cluster's history; trying again while this member leads", "cluster", FormatClusterID(h.cluster), "err", err)
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
