package cqlserver

import (
	"cmp"
	"context"
	"net/netip"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/metalog/metalog/cqlserver/internal/wire"
	"github.com/metalog/metalog/member"
)

// Membership is the membership slice of the member the server uses;
// *member.Cluster implements it. ListMembers is called from the Server's
// one membership goroutine, every Config.MembershipInterval, and
// BriefMembersAt from the connections' goroutines, for system.peers; the
// status they return is the caller's.
type Membership interface {
	// ListMembers lists the members, each with the status it reported
	// (its CQL listener among it) or Reachable false when it did not
	// answer.
	ListMembers(ctx context.Context) (*member.ClusterStatus, error)
	// BriefMembersAt is ListMembers with each member answering briefly
	// (its addresses, epoch and digest) once it has applied epoch, or
	// after a short wait as it is then.
	BriefMembersAt(ctx context.Context, epoch uint64) (*member.ClusterStatus, error)
}

var _ Membership = (*member.Cluster)(nil)

// DefaultMembershipInterval is the default of Config.MembershipInterval.
const DefaultMembershipInterval = 5 * time.Second

// The bits of nodeRegistration.mask.
const (
	registeredTopology uint32 = 1 << iota
	registeredStatus
)

// nodeRegistration is what a connection registered for of the node
// events, and the version to frame them in. The reader goroutine sets it
// on REGISTER; the membership goroutine reads it.
type nodeRegistration struct {
	mask    atomic.Uint32
	version atomic.Uint32
}

// peer is another member as the membership goroutine last saw it.
type peer struct {
	inet netip.AddrPort // its CQL listener
	up   bool
}

// nodeEvent is one TOPOLOGY_CHANGE or STATUS_CHANGE, before framing.
type nodeEvent struct {
	bit    uint32 // registeredTopology or registeredStatus
	change string // NEW_NODE, REMOVED_NODE, UP or DOWN
	node   netip.AddrPort
}

// message is the EVENT body of e.
func (e nodeEvent) message() wire.Message {
	if e.bit == registeredTopology {
		return &wire.TopologyChangeEvent{Change: e.change, Node: e.node}
	}
	return &wire.StatusChangeEvent{Change: e.change, Node: e.node}
}

// CQLInet is the address the CQL listener of a member is named by, in
// node events (and, once peers are listed, in system.peers): the CQL
// address it reported, with the host of its peer address when it listens
// on every interface (0.0.0.0 or ::), which no client can connect to.
// ok is false for a member that serves no CQL or reported a host name.
func CQLInet(ms *member.MemberStatus) (inet netip.AddrPort, ok bool) {
	ap, err := netip.ParseAddrPort(ms.CQLAddr)
	if err != nil {
		return netip.AddrPort{}, false
	}
	if ap.Addr().IsUnspecified() {
		host, err := netip.ParseAddrPort(ms.PeerAddr)
		if err != nil {
			return netip.AddrPort{}, false
		}
		ap = netip.AddrPortFrom(host.Addr(), ap.Port())
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), true
}

// peersOf is the other members of st that serve CQL, by raft id: those
// that answered, up, and those that did not but whose address last
// holds, down. self is this member's host id; a member that never
// answered has no known address and is left out.
func peersOf(st *member.ClusterStatus, self [16]byte, last map[string]peer) map[string]peer {
	out := make(map[string]peer, len(st.Members))
	for _, ms := range st.Members {
		id, err := strconv.ParseUint(ms.ID, 16, 64)
		if err != nil || HostID(id) == self {
			continue
		}
		if ms.Reachable {
			if inet, ok := CQLInet(ms); ok {
				out[ms.ID] = peer{inet: inet, up: true}
			}
			continue
		}
		if p, ok := last[ms.ID]; ok {
			out[ms.ID] = peer{inet: p.inet}
		}
	}
	return out
}

// nodeEvents are the events between two views of the peers, in order:
// the removals, then the additions (a member whose CQL address changed is
// removed and added), then the status changes, each sorted by member id.
// A member added is up: Cassandra's NEW_NODE is not followed by UP.
func nodeEvents(old, cur map[string]peer) []nodeEvent {
	var removed, added, status []nodeEvent
	for _, id := range sortedIDs(old) {
		if p, ok := cur[id]; !ok || p.inet != old[id].inet {
			removed = append(removed, nodeEvent{registeredTopology, "REMOVED_NODE", old[id].inet})
		}
	}
	for _, id := range sortedIDs(cur) {
		p := cur[id]
		o, ok := old[id]
		switch {
		case !ok || o.inet != p.inet:
			added = append(added, nodeEvent{registeredTopology, "NEW_NODE", p.inet})
		case o.up && !p.up:
			status = append(status, nodeEvent{registeredStatus, "DOWN", p.inet})
		case !o.up && p.up:
			status = append(status, nodeEvent{registeredStatus, "UP", p.inet})
		}
	}
	return append(append(removed, added...), status...)
}

func sortedIDs(m map[string]peer) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return cmp.Compare(a, b) })
	return ids
}

// watchMembers polls the member's membership every
// Config.MembershipInterval until the server closes, and hands the
// events between two polls to the connections registered for them. The
// first poll sets what the later ones compare with: a connection learns
// the members from system.peers, not from events.
func (s *Server) watchMembers() {
	defer s.wg.Done()
	tick := time.NewTicker(s.cfg.MembershipInterval)
	defer tick.Stop()
	var last map[string]peer
	for {
		st, err := s.cfg.Membership.ListMembers(s.ctx)
		switch {
		case err == nil:
			cur := peersOf(st, s.cfg.HostID, last)
			if last != nil {
				s.fanOut(nodeEvents(last, cur))
			}
			last = cur
			s.peers.Store(&cur)
		case s.ctx.Err() == nil:
			s.cfg.Logger.Warn("cql: listing the members failed", "err", err)
		}
		select {
		case <-s.ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// knownPeers is the other members as watchMembers last saw them, nil
// before its first poll.
func (s *Server) knownPeers() map[string]peer {
	if p := s.peers.Load(); p != nil {
		return *p
	}
	return nil
}

// fanOut queues evs on every connection registered for them, without
// waiting for any: one whose events back up is closed, as a slow schema
// feed's is.
func (s *Server) fanOut(evs []nodeEvent) {
	if len(evs) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if !c.node.queue(evs, c.events) {
			s.cfg.Logger.Warn("cql connection: closed", "remote", c.nc.RemoteAddr().String(), "err", errEventBacklog)
			c.nc.Close()
		}
	}
}

// queue queues on events the events of evs registered for, without
// waiting: false when events is full.
func (r *nodeRegistration) queue(evs []nodeEvent, events chan<- wire.Frame) bool {
	mask := r.mask.Load()
	if mask == 0 {
		return true
	}
	v := wire.Version(r.version.Load())
	for _, e := range evs {
		if mask&e.bit == 0 {
			continue
		}
		select {
		case events <- wire.ResponseFrame(v, wire.EventStream, e.message(), nil):
		default:
			return false
		}
	}
	return true
}

// add records a REGISTER for the node events of mask, framed in version
// v.
func (r *nodeRegistration) add(mask uint32, v wire.Version) {
	if mask == 0 {
		return
	}
	r.version.Store(uint32(v))
	r.mask.Or(mask)
}
