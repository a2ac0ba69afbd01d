package member

import (
	"crypto/x509"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync/atomic"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/raftlog"
)

// The peer port trusts the members of the cluster only (raftlog.PeerGate
// says how). peerTrust is who they are: it maps a peer's certificate, or
// the id or name a peer without certificate gives, to a current member,
// from the membership the raft node applied, or, while a member still
// joins, from the members its join target listed. A member is identified
// by a certificate that names it (its subject CN, or a DNS SAN, is the
// member's name) and its peer address (an IP or DNS SAN matches the host
// of the peer address the membership records); one that names several
// members, or this member itself, identifies none.
type peerTrust struct {
	c    *core
	gate *raftlog.PeerGate
	// started is the raft node once started; before, no membership is known.
	started atomic.Pointer[raftlog.Node]
	// joinList are the members the join target listed (a member that joins),
	// by id, set before the node starts: who is a member until the log
	// holds a membership.
	joinList atomic.Pointer[map[uint64]memberInfo]
	// founders are the founding members by id: the contexts of a new
	// cluster's members before their conf changes apply.
	founders map[uint64]memberInfo
	// vouched are the members the members this one knows list and its
	// log does not show yet (vouch.go), by id; vouchc asks for a round.
	vouched atomic.Pointer[map[uint64]memberInfo]
	vouchc  chan struct{}
}

// newPeerTrust returns the peer trust of c, a member configured with cfg,
// logging refusals to c's logger.
func newPeerTrust(c *core, cfg *Config) *peerTrust {
	p := &peerTrust{c: c, founders: make(map[uint64]memberInfo), vouchc: make(chan struct{}, 1)}
	for _, im := range cfg.initialCluster() {
		p.founders[ID(im.Name)] = memberInfo{Name: im.Name, PeerAddr: im.PeerAddr}
	}
	p.gate = raftlog.NewPeerGate(p, c.logger)
	return p
}

// setJoin records the members a join target listed (the plan's
// joinPeers) before the node starts.
func (p *peerTrust) setJoin(listed []*pb.Member) {
	join := make(map[uint64]memberInfo, len(listed))
	for _, pm := range listed {
		if id, ok := parseID(pm.Id); ok {
			join[id] = memberInfo{Name: pm.Name, PeerAddr: pm.PeerAddr}
		}
	}
	p.joinList.Store(&join)
}

// members returns the current members by id (this member among them), or
// nil while no node runs: the membership of the log, or, while the log
// holds none (a member joining), the join target's list; and the members
// the known ones vouch for (vouch.go).
func (p *peerTrust) members() map[uint64]memberInfo {
	n := p.started.Load()
	if n == nil {
		return nil
	}
	out := p.logMembers(n)
	p.withVouched(n, out)
	return out
}

// logMembers returns the members of n's log by id, or, while the log
// holds none (a member joining), the join target's list.
func (p *peerTrust) logMembers(n *raftlog.Node) map[uint64]memberInfo {
	ps := n.Members()
	out := make(map[uint64]memberInfo, len(ps))
	for _, m := range ps {
		info, err := parseMemberInfo(m.Context)
		if err != nil || info.Name == "" {
			// A founding member's context comes with its conf change,
			// applied just after the start.
			info = p.founders[m.ID]
		}
		out[m.ID] = info
	}
	if len(out) == 0 {
		if join := p.joinList.Load(); join != nil {
			maps.Copy(out, *join)
		}
	}
	return out
}

// CertificateMember implements raftlog.PeerAuthorizer: the current
// member, other than this one, whose name and peer address cert names.
// Before the node starts it answers 0 and no error (the CA alone is
// trusted, for the dials of the --force-new-cluster guard).
func (p *peerTrust) CertificateMember(cert *x509.Certificate) (uint64, error) {
	members := p.members()
	if members == nil {
		return 0, nil
	}
	id, err := certificateMember(cert, members, p.c.id, p.c.name)
	if err != nil {
		p.wantVouch() // a member added while this one was behind?
	}
	return id, err
}

// certificateMember is the member of members, other than self (named
// selfName), that cert names (certificateNames), or why there is none.
func certificateMember(cert *x509.Certificate, members map[uint64]memberInfo, self uint64, selfName string) (uint64, error) {
	var matches []uint64
	for id, info := range members {
		if certificateNames(cert, info) {
			matches = append(matches, id)
		}
	}
	slices.Sort(matches)
	switch {
	case len(matches) == 0:
		return 0, fmt.Errorf("%w: certificate %s (DNS names %v, IP addresses %v) names no current member: a member's peer certificate names the member "+
			"(subject CN or a DNS SAN equal to its name) and its peer address (an IP or DNS SAN of its host); the members are %s",
			raftlog.ErrNotMember, certName(cert), cert.DNSNames, cert.IPAddresses, describeMembers(members))
	case len(matches) > 1:
		return 0, fmt.Errorf("%w: certificate %s names %d members (%s): a member's peer certificate must name one member only",
			raftlog.ErrNotMember, certName(cert), len(matches), describeMemberIDs(matches, members))
	case matches[0] == self:
		return 0, fmt.Errorf("%w: certificate %s names this member itself (%s); no other member may use it", raftlog.ErrNotMember, certName(cert), selfName)
	}
	return matches[0], nil
}

// KnownMember implements raftlog.PeerAuthorizer: the current member,
// other than this one, of id (if not 0) or name.
func (p *peerTrust) KnownMember(id uint64, name string) (uint64, error) {
	known, err := knownMember(id, name, p.members(), p.c.id)
	if err != nil {
		p.wantVouch() // a member added while this one was behind?
	}
	return known, err
}

// knownMember is the member of members, other than self, of id (if not
// 0) or name; a name given with an id must be that member's.
func knownMember(id uint64, name string, members map[uint64]memberInfo, self uint64) (uint64, error) {
	if id == 0 {
		for mid, info := range members {
			if info.Name == name && name != "" {
				id = mid
			}
		}
	}
	info, ok := members[id]
	switch {
	case !ok || id == 0:
		what := "member " + FormatID(id)
		if id == 0 {
			what = fmt.Sprintf("a member named %q", name)
		}
		return 0, fmt.Errorf("%w: %s is not one", raftlog.ErrNotMember, what)
	case id == self:
		return 0, fmt.Errorf("%w: member %s is this member itself", raftlog.ErrNotMember, FormatID(id))
	case name != "" && info.Name != name:
		return 0, fmt.Errorf("%w: member %s is %s, not %q", raftlog.ErrNotMember, FormatID(id), info.Name, name)
	}
	return id, nil
}

// CertificateMemberName is the name of the current member, other than
// this one, that a peer certificate identifies (its chain already verified
// against the peer CA by the caller): the check the client port makes of
// a joining member's peer certificate, which may then list the members.
// It requires both server and client use, as the peer port does.
func (p *peerTrust) CertificateMemberName(cert *x509.Certificate) (string, error) {
	if err := raftlog.CheckPeerUsage(cert); err != nil {
		return "", err
	}
	id, err := p.CertificateMember(cert)
	if err == nil && id == 0 {
		err = fmt.Errorf("%w: this member knows no membership yet", raftlog.ErrNotMember)
	}
	if err != nil {
		return "", err
	}
	return p.members()[id].Name, nil
}

// certificateNames reports whether cert names member info: its name (CN
// or a DNS SAN) and the host of its peer address (an IP or DNS SAN).
func certificateNames(cert *x509.Certificate, info memberInfo) bool {
	if info.Name == "" || (cert.Subject.CommonName != info.Name && !slices.Contains(cert.DNSNames, info.Name)) {
		return false
	}
	host, _, err := net.SplitHostPort(info.PeerAddr)
	return err == nil && cert.VerifyHostname(host) == nil
}

// certName is a certificate as refusals name it: its subject.
func certName(cert *x509.Certificate) string {
	return fmt.Sprintf("%q", cert.Subject.String())
}

// describeMembers lists members as "n1 (127.0.0.1:7071), n2 (...)", by
// name.
func describeMembers(members map[uint64]memberInfo) string {
	ids := slices.Sorted(maps.Keys(members))
	return describeMemberIDs(ids, members)
}

// describeMemberIDs lists the members ids of members, sorted by name.
func describeMemberIDs(ids []uint64, members map[uint64]memberInfo) string {
	if len(ids) == 0 {
		return "none known"
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		info := members[id]
		parts[i] = fmt.Sprintf("%s (%s)", cmpName(info.Name, FormatID(id)), info.PeerAddr)
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// cmpName is name, or else the id.
func cmpName(name, id string) string {
	if name == "" {
		return id
	}
	return name
}
