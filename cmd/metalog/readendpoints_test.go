package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// TestReadEndpointsFlag: with --read-endpoints the reads and the watch
// of the client subcommands go to the read member, and exec to
// --endpoints.
func TestReadEndpointsFlag(t *testing.T) {
	w := startMember(t, &fakeMember{})
	r := startMember(t, &fakeMember{watch: []*pb.WatchResponse{{Type: "events", Epoch: 1, Events: []*pb.Event{{Epoch: 1, Kind: "CREATE KEYSPACE", Keyspace: "shop"}}}}, watchEnd: status.Error(codes.PermissionDenied, "fake: token revoked")})
	both := []string{"--endpoints", w.addr, "--read-endpoints", " ," + r.addr}
	for _, args := range [][]string{
		{"describe", "shop.orders"},
		{"watch", "--from-epoch", "0"},
		{"exec", "-e", "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"},
	} {
		if out, err := runErr(t, append(args, both...)...); err != nil && args[0] != "watch" { // the watch ends with the member's error
			t.Errorf("%q: %v\n%s", args, err, out)
		}
	}
	if got, want := r.requests(), []string{"GetTable shop.orders at=-", "Watch from=0 ks= table="}; !slices.Equal(got, want) {
		t.Errorf("the read member was asked %q, want %q", got, want)
	}
	if got := w.requests(); len(got) != 1 || !strings.HasPrefix(got[0], "Execute ") {
		t.Errorf("the member of --endpoints was asked %q, want the Execute alone", got)
	}
}

// TestEveryClientCommandTakesReadEndpoints: each subcommand with
// --endpoints (a client of the members, the benchmark's own aside) has
// --read-endpoints too.
func TestEveryClientCommandTakesReadEndpoints(t *testing.T) {
	seen := 0
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		if cmd.LocalFlags().Lookup("endpoints") != nil && cmd.Name() != "bench" && cmd.Parent().Name() != "bench" {
			seen++
			if cmd.LocalFlags().Lookup("read-endpoints") == nil {
				t.Errorf("%s has --endpoints but no --read-endpoints", cmd.CommandPath())
			}
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	if seen < 10 {
		t.Fatalf("only %d client commands seen: the walk missed some", seen)
	}
}
