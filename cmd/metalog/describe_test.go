package main

import (
	"slices"
	"testing"
)

// TestDescribeAtEpoch: --at-epoch is sent only when given, 0 included,
// to the read the argument calls for.
func TestDescribeAtEpoch(t *testing.T) {
	m := startMember(t, &fakeMember{})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--at-epoch", "0"}, "-- the schema at 0\n"},
		{[]string{"shop", "--at-epoch", "5"}, "-- keyspace shop at 5\n"},
		{[]string{"shop.orders"}, "-- table shop.orders at -\n"},
	} {
		out, err := runErr(t, append([]string{"describe", "--endpoints", m.addr}, tc.args...)...)
		if err != nil || out != tc.want {
			t.Errorf("describe %q: %q, %v; want %q", tc.args, out, err, tc.want)
		}
	}
	want := []string{"GetSchema at=0", "GetKeyspace shop at=5", "GetTable shop.orders at=-"}
	if got := m.requests(); !slices.Equal(got, want) {
		t.Errorf("requests %q, want %q", got, want)
	}
}
