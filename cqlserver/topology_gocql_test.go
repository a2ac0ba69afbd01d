package cqlserver_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/metalog/metalog/cqlserver"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/schema"
)

// countingReader is a fakeReader that counts its reads.
type countingReader struct {
	fakeReader
	reads atomic.Int64
}

func (r *countingReader) Read(ctx context.Context, epoch uint64, consistency string, visible func(string) bool) (*metadata.ClusterMetadata, error) {
	r.reads.Add(1)
	return r.fakeReader.Read(ctx, epoch, consistency, visible)
}

// TestGocqlNodeEvents checks that gocql's control connection registers
// for and reads the node events: on a NEW_NODE it reloads the ring, which
// it reads from system.local (the member's schema read, counted here)
// and system.peers (the membership's).
func TestGocqlNodeEvents(t *testing.T) {
	fm := &fakeMembership{next: make(chan *member.ClusterStatus)}
	r := &countingReader{fakeReader: fakeReader{s: schema.Schema{}}}
	srv := cqlserver.New(cqlserver.Config{Writer: &fakeWriter{exec: noWrites}, Reader: r,
		Membership: fm, MembershipInterval: time.Millisecond, HostID: cqlserver.HostID(1)})
	addr := serve(t, srv)
	fm.poll(t, status(ms("1", addr.String(), true)))

	cluster := gocqlAt(addr.String())
	cluster.DisableInitialHostLookup = false // the ring it reloads
	session, err := cluster.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()

	before := r.reads.Load()
	fm.poll(t, status(ms("1", addr.String(), true), ms("2", "127.0.0.2:"+strconv.Itoa(addr.Port), true)))
	deadline := time.Now().Add(30 * time.Second)
	for r.reads.Load() < before+1 {
		if time.Now().After(deadline) {
			t.Fatalf("gocql read system.local %d times after NEW_NODE, want a ring reload", r.reads.Load()-before)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, with a deadline
	}
}
