package cqlserver_test

import (
	"context"
	"fmt"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/metalog/metalog/cqlserver"
	"github.com/metalog/metalog/cqlserver/internal/wire"
	"github.com/metalog/metalog/member"
)

// fakeMembership answers each ListMembers with the next status the test
// sends on next: a send returns once the server's membership goroutine
// has taken it, so that the test knows which poll it is at.
type fakeMembership struct {
	next chan *member.ClusterStatus

	mu  sync.Mutex
	cur *member.ClusterStatus // the last status handed out
}

// ListMembers answers with the status poll hands next, or without one
// waiting, the last one handed (the membership goroutine's polls and the
// reads of system.peers share it); before the first, it waits.
func (f *fakeMembership) ListMembers(ctx context.Context) (*member.ClusterStatus, error) {
	f.mu.Lock()
	cur := f.cur
	f.mu.Unlock()
	var wait <-chan time.Time // nil: wait for the next status
	if cur != nil {
		wait = time.After(0)
	}
	select {
	case st := <-f.next:
		f.mu.Lock()
		f.cur = st
		f.mu.Unlock()
		return st, nil
	case <-wait:
		return cur, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// BriefMembersAt is ListMembers: the fake's members are at every epoch.
func (f *fakeMembership) BriefMembersAt(ctx context.Context, _ uint64) (*member.ClusterStatus, error) {
	return f.ListMembers(ctx)
}

// poll hands the server's next poll st, with a deadline; from then on
// the other calls answer st too.
func (f *fakeMembership) poll(t *testing.T, st *member.ClusterStatus) {
	t.Helper()
	f.mu.Lock()
	f.cur = st
	f.mu.Unlock()
	select {
	case f.next <- st:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not poll its membership")
	}
}

// ms is a member's status: reachable with a CQL address, or not.
func ms(id, cqlAddr string, reachable bool) *member.MemberStatus {
	return &member.MemberStatus{ID: id, PeerAddr: "127.0.0.9:7000", CQLAddr: cqlAddr, Reachable: reachable}
}

func status(members ...*member.MemberStatus) *member.ClusterStatus {
	return &member.ClusterStatus{Members: members}
}

// nodeEvent decodes an EVENT frame of type TOPOLOGY_CHANGE or
// STATUS_CHANGE as "type change address".
func nodeEvent(t *testing.T, f wire.Frame) string {
	t.Helper()
	d := wire.NewDecoder(f.Body)
	typ, change, node := d.Str(), d.Str(), d.Inet()
	if err := d.Err(); err != nil || d.Remaining() != 0 {
		t.Fatalf("event %q %q: %v, %d bytes after", typ, change, err, d.Remaining())
	}
	return fmt.Sprintf("%s %s %s", typ, change, node)
}

// eventsUntilSupported sends OPTIONS and returns the node events c reads
// before its answer.
func eventsUntilSupported(t *testing.T, c *client) []string {
	t.Helper()
	c.send(99, &wire.Options{})
	var got []string
	for {
		f := c.recv()
		switch {
		case f.Opcode == wire.OpSupported && f.Stream == 99:
			return got
		case f.Opcode == wire.OpEvent && f.Stream == wire.EventStream:
			got = append(got, nodeEvent(t, f))
		default:
			t.Fatalf("got %v on stream %d", f.Opcode, f.Stream)
		}
	}
}

// dial connects another client to the server c is connected to, started.
func dial(t *testing.T, c *client) *client {
	t.Helper()
	d := *c
	nc, err := net.DialTimeout("tcp", c.nc.RemoteAddr().String(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	d.nc = nc
	d.started()
	return &d
}

// TestNodeEvents checks the TOPOLOGY_CHANGE and STATUS_CHANGE events of a
// scripted membership: a member that answers for the first time is a
// NEW_NODE, one gone a REMOVED_NODE, one that stops answering DOWN and
// answers again UP, a new CQL address a removal and an addition; removals
// come first, then additions, then status changes; this member itself, a
// member without CQL and one never reached are never named; and each
// connection gets only the types it registered for.
func TestNodeEvents(t *testing.T) {
	fm := &fakeMembership{next: make(chan *member.ClusterStatus)}
	self := uint64(0x1a)
	all := start(t, &fakeWriter{exec: noWrites}, "", func(cfg *cqlserver.Config) {
		cfg.Membership, cfg.MembershipInterval, cfg.HostID = fm, time.Millisecond, cqlserver.HostID(self)
	})
	all.started()
	statusOnly, schemaOnly, none := dial(t, all), dial(t, all), dial(t, all)
	for c, events := range map[*client][]string{
		all:        {wire.EventTopologyChange, wire.EventStatusChange},
		statusOnly: {wire.EventStatusChange},
		schemaOnly: {wire.EventSchemaChange},
	} {
		c.send(2, &wire.Register{Events: events})
		if f := c.recv(); f.Opcode != wire.OpReady {
			t.Fatalf("REGISTER answered with %v", f.Opcode)
		}
	}

	me := ms("1a", "127.0.0.1:9042", true)
	fm.poll(t, status(me, ms("2", "127.0.0.2:9042", true), ms("3", "", false), ms("6", "", true)))
	fm.poll(t, status(me, ms("2", "127.0.0.2:9042", true), ms("3", "127.0.0.3:9042", true),
		ms("4", "127.0.0.4:9042", true), ms("5", "0.0.0.0:9042", true), ms("6", "", true)))
	fm.poll(t, status(me, ms("2", "127.0.0.2:9042", false), ms("3", "127.0.0.3:9042", true), ms("5", "0.0.0.0:9042", true)))
	fm.poll(t, status(me, ms("2", "127.0.0.2:9042", true), ms("3", "127.0.0.3:9043", true), ms("5", "0.0.0.0:9042", false)))
	fm.poll(t, status(me, ms("2", "127.0.0.2:9042", true), ms("3", "127.0.0.3:9043", true))) // 5 removed while down
	// The events of the last poll are queued before the next is taken.
	fm.poll(t, status(me, ms("2", "127.0.0.2:9042", true), ms("3", "127.0.0.3:9043", true)))

	want := []string{
		"TOPOLOGY_CHANGE NEW_NODE 127.0.0.3:9042",
		"TOPOLOGY_CHANGE NEW_NODE 127.0.0.4:9042",
		"TOPOLOGY_CHANGE NEW_NODE 127.0.0.9:9042",
		"TOPOLOGY_CHANGE REMOVED_NODE 127.0.0.4:9042",
		"STATUS_CHANGE DOWN 127.0.0.2:9042",
		"TOPOLOGY_CHANGE REMOVED_NODE 127.0.0.3:9042",
		"TOPOLOGY_CHANGE NEW_NODE 127.0.0.3:9043",
		"STATUS_CHANGE UP 127.0.0.2:9042",
		"STATUS_CHANGE DOWN 127.0.0.9:9042",
		"TOPOLOGY_CHANGE REMOVED_NODE 127.0.0.9:9042",
	}
	var wantStatus []string
	for _, w := range want {
		if strings.HasPrefix(w, wire.EventStatusChange) {
			wantStatus = append(wantStatus, w)
		}
	}
	for _, tc := range []struct {
		name string
		c    *client
		want []string
	}{{"topology and status", all, want}, {"status", statusOnly, wantStatus}, {"schema", schemaOnly, nil}, {"none", none, nil}} {
		if got := eventsUntilSupported(t, tc.c); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("connection registered for %s got:\n%s\nwant:\n%s", tc.name, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}
