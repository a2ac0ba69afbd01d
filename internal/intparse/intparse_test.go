package intparse

import (
	"errors"
	"testing"
)

func TestInt(t *testing.T) {
	for _, tc := range []struct {
		s          string
		base, bits int
		want       int64
		err        string
	}{
		{"500", 10, 64, 500, ""},
		{"-1", 10, 64, -1, ""},
		{"0x10", 0, 64, 16, ""},
		{"9223372036854775807", 10, 64, 9223372036854775807, ""},
		{"9223372036854775808", 10, 64, 0, "out of range (at most 9223372036854775807)"},
		{"99999999999999999999", 10, 64, 0, "out of range (at most 9223372036854775807)"},
		{"-99999999999999999999", 10, 64, 0, "out of range (at least -9223372036854775808)"},
		{"200", 10, 8, 0, "out of range (at most 127)"},
		{"abc", 10, 64, 0, "not an integer"},
		{"1.5", 10, 64, 0, "not an integer"},
		{"", 10, 64, 0, "not an integer"},
		{"0x10", 10, 64, 0, "not an integer"},
	} {
		n, err := Int(tc.s, tc.base, tc.bits)
		check(t, tc.s, err, tc.err)
		if tc.err == "" && n != tc.want {
			t.Errorf("Int(%q) = %d, want %d", tc.s, n, tc.want)
		}
	}
}

func TestUint(t *testing.T) {
	for _, tc := range []struct {
		s          string
		base, bits int
		want       uint64
		err        string
	}{
		{"5", 10, 64, 5, ""},
		{"18446744073709551615", 10, 64, 18446744073709551615, ""},
		{"18446744073709551616", 10, 64, 0, "out of range (at most 18446744073709551615)"},
		{"-1", 10, 64, 0, "out of range (at least 0)"},
		{"-99999999999999999999", 10, 64, 0, "out of range (at least 0)"},
		{"300", 0, 8, 0, "out of range (at most 255)"},
		{"-", 10, 64, 0, "not an integer"},
		{"-x", 10, 64, 0, "not an integer"},
		{"five", 10, 64, 0, "not an integer"},
	} {
		n, err := Uint(tc.s, tc.base, tc.bits)
		check(t, tc.s, err, tc.err)
		if tc.err == "" && n != tc.want {
			t.Errorf("Uint(%q) = %d, want %d", tc.s, n, tc.want)
		}
	}
}

func check(t *testing.T, s string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%q: %v", s, err)
	case want != "" && (err == nil || err.Error() != want):
		t.Errorf("%q: error %v, want %q", s, err, want)
	case want == "not an integer" && !errors.Is(err, ErrSyntax),
		want != "" && want != "not an integer" && !errors.Is(err, ErrRange):
		t.Errorf("%q: %v does not match the package's error", s, err)
	}
}
