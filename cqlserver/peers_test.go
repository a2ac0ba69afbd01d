package cqlserver_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/metalog/metalog/cqlserver"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/schema"
)

// TestPeersRows: system.peers and system.peers_v2 list the other members
// that serve CQL, at their CQL address, each with the schema_version of
// the digest it reports now; a member that stopped answering keeps the
// address last seen and has no schema_version (drivers leave it out of
// their agreement wait); one never seen has no row, nor has this member.
func TestPeersRows(t *testing.T) {
	fm := &fakeMembership{next: make(chan *member.ClusterStatus)}
	srv := cqlserver.New(cqlserver.Config{Writer: &fakeWriter{exec: noWrites}, Reader: &fakeReader{s: schema.Schema{}},
		Membership: fm, MembershipInterval: time.Millisecond, HostID: cqlserver.HostID(1)})
	addr := serve(t, srv)
	port := strconv.Itoa(addr.Port)
	digest := strings.Repeat("ab", 32)
	withDigest := func(m *member.MemberStatus) *member.MemberStatus { m.Digest = digest; return m }
	fm.poll(t, status(ms("1", addr.String(), true), withDigest(ms("2", "127.0.0.2:"+port, true)), ms("3", "127.0.0.3:"+port, true)))
	fm.poll(t, status(ms("1", addr.String(), true), withDigest(ms("2", "127.0.0.2:"+port, true)), ms("3", "", false), ms("4", "", false)))
	fm.poll(t, status(ms("1", addr.String(), true), withDigest(ms("2", "127.0.0.2:"+port, true)), ms("3", "", false), ms("4", "", false)))

	session, err := gocqlAt(addr.String()).CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	var sum [32]byte
	for i := range sum {
		sum[i] = 0xab
	}
	wantVersion := gocql.UUID(cqlserver.SchemaVersion(sum))
	for _, table := range []string{"peers", "peers_v2"} {
		got := map[string]string{}
		iter := session.Query(`SELECT * FROM system.` + table).Iter()
		for row := map[string]any{}; iter.MapScan(row); row = map[string]any{} {
			peer := fmt.Sprint(row["peer"])
			version := "none"
			if v, ok := row["schema_version"].(gocql.UUID); ok && v != (gocql.UUID{}) {
				version = v.String()
			}
			if table == "peers_v2" {
				if p, _ := row["native_port"].(int); p != addr.Port {
					t.Errorf("%s: peer %s native_port %v, want %d", table, peer, row["native_port"], addr.Port)
				}
			}
			got[peer] = version
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"127.0.0.2": wantVersion.String(), "127.0.0.3": "none"}
		if len(got) != len(want) || got["127.0.0.2"] != want["127.0.0.2"] || got["127.0.0.3"] != want["127.0.0.3"] {
			t.Errorf("system.%s: %v, want %v", table, got, want)
		}
	}
}
