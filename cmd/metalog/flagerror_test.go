package main

import (
	"testing"
)

// TestIntegerFlagErrorsSayOutOfRange: an integer flag given a number that
// does not fit says "out of range" with the bound, once, instead of
// strconv's text.
func TestIntegerFlagErrorsSayOutOfRange(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--max-request-bytes", "99999999999999999999"}, `invalid argument "99999999999999999999" for --max-request-bytes: out of range (at most 9223372036854775807)`},
		{[]string{"serve", "--snapshot-interval-entries=-1"}, `invalid argument "-1" for --snapshot-interval-entries: out of range (at least 0)`},
		{[]string{"describe", "--min-epoch", "99999999999999999999"}, `invalid argument "99999999999999999999" for --min-epoch: out of range (at most 18446744073709551615)`},
		{[]string{"serve", "--max-request-bytes", "lots"}, `invalid argument "lots" for --max-request-bytes: not an integer`},
	} {
		root := newRootCmd()
		root.SetArgs(tc.args)
		if err := root.Execute(); err == nil || err.Error() != tc.want {
			t.Errorf("%v:\n got %v\nwant %s", tc.args, err, tc.want)
		}
	}
}
