package member

import (
	"context"
	"time"

	"github.com/metalog/metalog/raftlog"
)

// A member whose log is behind a member's addition does not know that
// member, and refuses it (peerTrust). That would be for good when the new
// member leads: the lagging member learns of it only from the leader it
// refuses. So a refusal of a peer this member does not know starts a
// round of status calls to the members it does know (at most one per
// vouchInterval): the configuration each answers with lists every member
// with its peer address, and the members listed there that this member's
// log does not show (and that it does not know to be removed) are taken
// as members until the log shows them, and the transport sends to them
// (raft answers their messages). Only a member already trusted
// vouches for another, over a connection that, with peer TLS, its
// certificate proves.

// vouchInterval bounds how often a member asks the others who the members
// are.
const vouchInterval = time.Second

// wantVouch asks the vouching loop for a round, without blocking: a peer
// named, or a certificate identified, no member this member knows.
func (p *peerTrust) wantVouch() {
	select {
	case p.vouchc <- struct{}{}:
	default:
	}
}

// vouchLoop runs until stop is closed, asking the other members who the
// members are whenever wantVouch asked for it, at most once per
// vouchInterval.
func (p *peerTrust) vouchLoop(stop <-chan struct{}) {
	var last time.Time
	for {
		select {
		case <-stop:
			return
		case <-p.vouchc:
		}
		if wait := vouchInterval - time.Since(last); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-stop:
				t.Stop()
				return
			}
		}
		last = time.Now()
		p.vouch()
	}
}

// vouch asks every member this member knows for its status and keeps, as
// vouched members, those their configurations list that the log does not
// show and that are not removed.
func (p *peerTrust) vouch() {
	n := p.started.Load()
	if n == nil {
		return
	}
	own := p.logMembers(n)
	ctx, cancel := context.WithTimeout(p.c.peerContext(context.Background()), statusTimeout)
	defer cancel()
	cluster := optionalID(n.ClusterID())
	vouched := make(map[uint64]memberInfo)
	for id, a := range askStatuses(ctx, p.c.peerDial, p.c.probeTargets()) {
		if a.err != nil || a.status.ClusterID != cluster || a.status.ID != FormatID(id) {
			continue
		}
		for _, cm := range a.status.Configuration {
			vid, ok := parseID(cm.ID)
			if !ok || vid == p.c.id || cm.Name == "" || cm.PeerAddr == "" {
				continue
			}
			if _, known := own[vid]; known {
				continue
			}
			if at, _ := n.PeerRemoved(vid); at == 0 {
				vouched[vid] = memberInfo{Name: cm.Name, PeerAddr: cm.PeerAddr}
			}
		}
	}
	p.vouched.Store(&vouched)
	if len(vouched) == 0 {
		return
	}
	p.c.logger.Info("members this member's log does not show yet, as the members it knows list them; taken as members until the log shows them",
		"vouched", describeMembers(vouched))
	// Raft answers a message to its sender: the transport must reach it.
	for id, info := range vouched {
		if err := p.c.transport.AddPeer(id, info.PeerAddr); err != nil {
			p.c.logger.Error("add peer", "id", FormatID(id), "name", info.Name, "err", err)
		}
	}
}

// withVouched adds to members the vouched members that are not removed
// from n's membership (a removal the log applied since).
func (p *peerTrust) withVouched(n *raftlog.Node, members map[uint64]memberInfo) {
	v := p.vouched.Load()
	if v == nil {
		return
	}
	for id, info := range *v {
		if _, ok := members[id]; ok {
			continue
		}
		if at, _ := n.PeerRemoved(id); at == 0 {
			members[id] = info
		}
	}
}
