package loopback

import "testing"

func TestIs(t *testing.T) {
	for _, tc := range []struct {
		hostport string
		want     bool
	}{
		{"127.0.0.1:7070", true},
		{"127.1.2.3:7070", true},
		{"[::1]:7070", true},
		{"localhost:7070", true},
		{"LocalHost:7070", true},
		{":7070", false},
		{"0.0.0.0:7070", false},
		{"[::]:7070", false},
		{"10.0.0.1:7070", false},
		{"192.0.2.1:7070", false},
		{"metalog.example:7070", false},
		{"127.0.0.1", false}, // no port: not a host:port
		{"", false},
	} {
		if got := Is(tc.hostport); got != tc.want {
			t.Errorf("Is(%q) = %v, want %v", tc.hostport, got, tc.want)
		}
	}
}
