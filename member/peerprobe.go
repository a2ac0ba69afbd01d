package member

import (
	"context"
	"strings"
	"time"

	"github.com/metalog/metalog/internal/connfail"
	"github.com/metalog/metalog/raftlog"
)

// probeInterval is how often a member with peer TLS and no leader asks
// its peers for their status (probePeers).
const probeInterval = 2 * time.Second

// probePeers runs until stop is closed on a member with peer TLS: while it
// knows no leader it asks every peer it knows for its status
// (PeerService.NodeStatus), every probeInterval. A member that joins, or
// one the leader cannot reach, sends nothing of its own (raft leaves it
// waiting for the leader), so without these calls the only trace of a
// TLS mismatch on its side would be the leader's connections it refuses,
// which say nothing of where the leader is; a call that fails its
// handshake is logged and remembered by the HandshakeLog under the peer's
// address, and /readyz shows it.
func (c *core) probePeers(stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-stop
		cancel()
	}()
	tick := time.NewTicker(probeInterval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
		if c.node.Status().Leader != 0 {
			continue
		}
		targets := c.probeTargets()
		for id, a := range askStatuses(c.peerContext(ctx), c.peerDial, targets) {
			// A peer that refuses this member's certificate does so
			// after the handshake completed on this side (TLS 1.3): its
			// alert comes with the call's error.
			if _, why := connfail.Of(a.err); a.err != nil && strings.HasPrefix(why, connfail.TLSPrefix) {
				c.handshakes.Dialed(targets[id], id, a.err)
			}
		}
	}
}

// probeTargets are the peers probePeers asks, by id: the members of the
// log, and for a member still joining those the join target listed.
func (c *core) probeTargets() map[uint64]string {
	out := make(map[uint64]string)
	if join := c.trust.joinList.Load(); join != nil {
		for id, info := range *join {
			if id != c.id {
				out[id] = info.PeerAddr
			}
		}
	}
	for _, p := range c.node.Members() {
		if info, err := parseMemberInfo(p.Context); err == nil && p.ID != c.id && info.PeerAddr != "" {
			out[p.ID] = info.PeerAddr
		}
	}
	return out
}

// maxTLSDetail bounds the failed handshakes a not-ready /readyz names.
const maxTLSDetail = 2

// peerTLSDetail is detail with the first few of failures, the recent
// failed peer TLS handshakes (raftlog.HandshakeLog.Recent): why a member
// that is not ready may stay so.
func peerTLSDetail(detail string, failures []raftlog.HandshakeFailure) string {
	for i, f := range failures {
		if i == maxTLSDetail {
			break
		}
		detail += "; " + f.String()
	}
	return detail
}
