package intparse

import (
	"errors"
	"strconv"
	"testing"
)

func TestIntAndUint(t *testing.T) {
	for _, tc := range []struct {
		s          string
		base, bits int
		signed     bool
		want       string // the number, or the error
	}{
		{"500", 10, 64, true, "500"},
		{"-1", 10, 64, true, "-1"},
		{"0x10", 0, 64, true, "16"},
		{"9223372036854775807", 10, 64, true, "9223372036854775807"},
		{"9223372036854775808", 10, 64, true, "out of range (at most 9223372036854775807)"},
		{"99999999999999999999", 10, 64, true, "out of range (at most 9223372036854775807)"},
		{"-99999999999999999999", 10, 64, true, "out of range (at least -9223372036854775808)"},
		{"200", 10, 8, true, "out of range (at most 127)"},
		{"abc", 10, 64, true, "not an integer"},
		{"1.5", 10, 64, true, "not an integer"},
		{"", 10, 64, true, "not an integer"},
		{"0x10", 10, 64, true, "not an integer"},
		{"5", 10, 64, false, "5"},
		{"18446744073709551615", 10, 64, false, "18446744073709551615"},
		{"18446744073709551616", 10, 64, false, "out of range (at most 18446744073709551615)"},
		{"-1", 10, 64, false, "out of range (at least 0)"},
		{"-99999999999999999999", 10, 64, false, "out of range (at least 0)"},
		{"300", 0, 8, false, "out of range (at most 255)"},
		{"-", 10, 64, false, "not an integer"},
		{"-x", 10, 64, false, "not an integer"},
		{"five", 10, 64, false, "not an integer"},
	} {
		var got string
		var err error
		if tc.signed {
			var n int64
			n, err = Int(tc.s, tc.base, tc.bits)
			got = strconv.FormatInt(n, 10)
		} else {
			var n uint64
			n, err = Uint(tc.s, tc.base, tc.bits)
			got = strconv.FormatUint(n, 10)
		}
		if err != nil {
			got = err.Error()
			if errors.Is(err, ErrSyntax) == errors.Is(err, ErrRange) || errors.Is(err, ErrSyntax) != (tc.want == "not an integer") {
				t.Errorf("%q: %v does not match the one sentinel it should", tc.s, err)
			}
		}
		if got != tc.want {
			t.Errorf("signed=%v %q base %d bits %d: %s, want %s", tc.signed, tc.s, tc.base, tc.bits, got, tc.want)
		}
	}
}
