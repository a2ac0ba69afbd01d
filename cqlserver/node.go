package cqlserver

import (
	"context"
	"encoding/hex"
	"net"
	"net/netip"
	"strconv"

	"github.com/metalog/metalog/cqlserver/internal/wire"
	"github.com/metalog/metalog/member"
)

// nodeView answers what a connection asks of the members themselves:
// system.local, system.peers, system.peers_v2 and DESCRIBE CLUSTER.
type nodeView struct {
	srv     *Server
	ctx     context.Context
	local   net.Addr // the connection's local address: this member's
	version wire.Version
}

// nodeView returns the connection's view of the members.
func (c *conn) nodeView() nodeView {
	return nodeView{srv: c.srv, ctx: c.ctx, local: c.nc.LocalAddr(), version: c.version}
}

// systemTable answers a SELECT of system.local, system.peers or
// system.peers_v2.
func (n nodeView) systemTable(st *selectStmt) (*table, error) {
	t := &table{keyspace: "system", name: st.table}
	var err error
	switch st.table {
	case "peers":
		t.cols = peersCol
		t.rows, err = n.peerRows(false)
	case "peers_v2":
		t.cols = peersV2Col
		t.rows, err = n.peerRows(true)
	case "local":
		t.cols = localCol
		var row []any
		row, err = n.localRow()
		t.rows = [][]any{row}
	default:
		return nil, invalidf("table system.%s is not served", st.table)
	}
	if err != nil {
		return nil, err
	}
	for _, w := range st.where {
		if st.table != "local" || w.column != "key" || len(st.where) > 1 {
			return nil, invalidf("restriction on %s of system.%s is not served", w.column, st.table)
		}
		if w.value != "local" {
			t.rows = nil
		}
	}
	return t, nil
}

// localRow is the one row of system.local, in localCol's order. Its
// schema_version is that of the whole schema, whatever the connection
// may read, as the peers' are: drivers wait for them to agree.
func (n nodeView) localRow() ([]any, error) {
	md, err := n.srv.cfg.Reader.Read(n.ctx, 0, "", nil)
	if err != nil {
		return nil, err
	}
	addr := addrOf(n.local)
	cfg := &n.srv.cfg
	return []any{
		"local", "COMPLETED", addr, cfg.ClusterName,
		cqlVersion, dataCenter, cfg.HostID, addr,
		strconv.Itoa(int(n.version)), partitioner, rack, releaseVersion,
		addr, SchemaVersion(md.Schema.Digest()), []string{tokenOf(cfg.HostID)},
	}, nil
}

// peerRows are the rows of system.peers (v2 false) or system.peers_v2:
// one per other member that serves CQL, from the members' status now, so
// that a driver finds the members from one contact point and its wait
// for schema agreement compares each member's schema as it is. A member
// that does not answer keeps the row of the address it last gave (the
// membership goroutine's), with no schema_version, which drivers leave
// out of the agreement (as a down node); one that never answered has no
// row. Without Config.Membership there are no rows.
func (n nodeView) peerRows(v2 bool) ([][]any, error) {
	if n.srv.cfg.Membership == nil {
		return nil, nil
	}
	st, err := n.caughtUp()
	if err != nil {
		return nil, err
	}
	known := n.srv.knownPeers()
	var rows [][]any
	for _, ms := range st.Members {
		id, err := strconv.ParseUint(ms.ID, 16, 64)
		if err != nil || HostID(id) == n.srv.cfg.HostID {
			continue
		}
		inet, ok := CQLInet(ms)
		var version any
		if ms.Reachable {
			version = digestVersion(ms.Digest)
		} else if p, seen := known[ms.ID]; seen {
			inet, ok = p.inet, true
		}
		if !ok {
			continue
		}
		rows = append(rows, peerRow(ms, HostID(id), inet, version, v2))
	}
	return rows, nil
}

// caughtUp lists the members at this member's epoch: each that answers
// does once it has applied that epoch, or after a short wait as it is
// then (member.Cluster.BriefMembersAt). A driver reads system.peers right
// after its DDL to wait for schema agreement, when the others have the
// change committed but may not have applied it yet: a millisecond here
// spares it a sleep of its own (gocql and the Python driver sleep 200 ms
// before they look again).
func (n nodeView) caughtUp() (*member.ClusterStatus, error) {
	md, err := n.srv.cfg.Reader.Read(n.ctx, 0, "", nil)
	if err != nil {
		return nil, err
	}
	return n.srv.cfg.Membership.BriefMembersAt(n.ctx, md.Epoch)
}

// peerRow is the row of member ms, with host id hostID, reached at inet,
// with schema_version version (nil: unknown), in peersCol's order or, v2,
// peersV2Col's.
func peerRow(ms *member.MemberStatus, hostID [16]byte, inet netip.AddrPort, version any, v2 bool) []any {
	tokens := []string{tokenOf(hostID)}
	if !v2 {
		return []any{inet.Addr(), dataCenter, hostID, nil, rack, releaseVersion, inet.Addr(), version, tokens}
	}
	var peerPort any
	if ap, err := netip.ParseAddrPort(ms.PeerAddr); err == nil {
		peerPort = int32(ap.Port())
	}
	return []any{inet.Addr(), peerPort, dataCenter, hostID, inet.Addr(), int32(inet.Port()), nil, nil,
		rack, releaseVersion, version, tokens}
}

// digestVersion is the schema_version of a member's hex schema digest,
// nil when the digest is not one.
func digestVersion(digest string) any {
	b, err := hex.DecodeString(digest)
	if err != nil || len(b) != 32 {
		return nil
	}
	return SchemaVersion([32]byte(b))
}
