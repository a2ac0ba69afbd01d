package client_test

import (
	"testing"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/member"
)

// TestWatchTypeOf: the client's types are the strings the members send,
// a message's type reads as one of them, and a type from a newer member
// (or none) is not Known.
func TestWatchTypeOf(t *testing.T) {
	for _, tc := range []struct {
		wire  string // what a member sends
		want  client.WatchType
		known bool
	}{
		{member.WatchEvents, client.WatchEvents, true},
		{member.WatchProgress, client.WatchProgress, true},
		{member.WatchResync, client.WatchResync, true},
		{"compacted", "compacted", false},
		{"", "", false},
	} {
		got := client.WatchTypeOf(&pb.WatchResponse{Type: tc.wire})
		if got != tc.want || got.Known() != tc.known {
			t.Errorf("WatchTypeOf(type %q) = %q (known %v), want %q (known %v)", tc.wire, got, got.Known(), tc.want, tc.known)
		}
	}
	if got := client.WatchTypeOf(nil); got != "" || got.Known() {
		t.Errorf("WatchTypeOf(nil) = %q, want the empty type, not known", got)
	}
}
