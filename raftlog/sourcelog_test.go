package raftlog

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/metalog/metalog/internal/testkit"
)

// TestFailedHandshakesFromOneHostBounded: 300 TLS handshakes from one
// host, each from another source port and with another expired
// certificate (so each fails with another reason), half on the log
// stream and half on gRPC, write one WARN line, not 300; closing the log
// says how many were held back, in one line.
func TestFailedHandshakesFromOneHostBounded(t *testing.T) {
	ca := newPeerCA(t)
	b := startTLSMember(t, 2, ca)
	const attempts = 300
	now := time.Now()
	for i := range attempts {
		// Expired i seconds apart: the reason names the expiry.
		cert := ca.Issue(t, "stranger", testkit.ClientOnly(),
			testkit.Valid(now.Add(-2*time.Hour), now.Add(-time.Hour-time.Duration(i)*time.Second))).TLS
		c, err := net.Dial("tcp", b.addr)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			// The log stream; without the preface, gRPC.
			if _, err := c.Write([]byte(streamPreface)); err != nil {
				t.Fatal(err)
			}
		}
		_ = c.SetDeadline(time.Now().Add(waitTimeout))
		tc := tls.Client(c, &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1", Certificates: []tls.Certificate{cert}})
		if err := tc.Handshake(); err == nil {
			// TLS 1.3: the server's refusal comes after.
			_, err = tc.Read(make([]byte, 1))
		}
		c.Close()
	}
	const failed = "peer TLS handshake failed: a peer cannot reach this member"
	waitFor(t, fmt.Sprintf("%d failed handshakes noted", attempts), func() bool {
		return b.log.count(failed) == attempts
	})
	if n := b.log.count("level=WARN", failed, "peer=127.0.0.1 "); n != 1 {
		t.Errorf("%d WARN lines for %d failed handshakes from one host, want 1", n, attempts)
	}
	if n := b.log.count("level=WARN"); n > 2 {
		t.Errorf("%d WARN lines in all, want at most 2:\n%s", n, b.log.buf.String())
	}
	b.hs.Close()
	if n := b.log.count("level=WARN", fmt.Sprintf("%d more failed handshakes from 127.0.0.1 in the last minute", attempts-1)); n != 1 {
		t.Errorf("%d summary lines when the log closed, want 1:\n%s", n, b.log.buf.String())
	}
}

// TestSourceLogWindows: per window, one loud line per host whatever its
// ports and reasons, for at most sourceLoudHosts hosts; when the window
// ends, one summary line per host with lines held back and one for the
// further hosts; what is remembered stays bounded however many hosts
// there are.
func TestSourceLogWindows(t *testing.T) {
	out := &lines{}
	h := NewHandshakeLog(out.logger())
	defer h.Close()
	now := time.Unix(1000, 0)
	h.now = func() time.Time { return now }
	for i := range 300 {
		h.accepted(fmt.Sprintf("10.0.0.7:%d", 1024+i), fmt.Errorf("tls: reason %d", i))
	}
	if n := out.count("level=WARN"); n != 1 {
		t.Fatalf("%d WARN lines for 300 failures of one host, want 1:\n%s", n, out.buf.String())
	}
	const hosts = 10 * sourceOthersKept
	for i := range hosts {
		h.accepted(net.JoinHostPort(net.IPv4(10, 1, byte(i>>8), byte(i)).String(), "5555"), errors.New("tls: client didn't provide a certificate"))
	}
	if n := out.count("level=WARN"); n != sourceLoudHosts {
		t.Errorf("%d WARN lines for failures of %d hosts, want %d", n, hosts+1, sourceLoudHosts)
	}
	s := h.sources
	s.mu.Lock()
	loud, others := len(s.loud), len(s.others)
	s.mu.Unlock()
	if loud > sourceLoudHosts || others > sourceOthersKept {
		t.Errorf("%d hosts logged loud and %d others remembered, want at most %d and %d", loud, others, sourceLoudHosts, sourceOthersKept)
	}

	// The window ends with the next failure after it.
	now = now.Add(sourceWindow)
	h.accepted("10.0.0.7:9999", errors.New("tls: once more"))
	if n := out.count("level=WARN", "299 more failed handshakes from 10.0.0.7 in the last minute", "source=10.0.0.7", "count=299"); n != 1 {
		t.Errorf("%d summary lines for the host, want 1:\n%s", n, out.buf.String())
	}
	further := hosts - (sourceLoudHosts - 1)
	if n := out.count("level=WARN", fmt.Sprintf("%d more failed handshakes from at least %d other hosts in the last minute", further, sourceOthersKept)); n != 1 {
		t.Errorf("%d summary lines for the further hosts, want 1:\n%s", n, out.buf.String())
	}
	if n := out.count("level=WARN", "more failed handshakes"); n != 2 {
		t.Errorf("%d summary lines, want 2 (hosts whose only failure was logged have none)", n)
	}
	if n := out.count("level=WARN", "a peer cannot reach this member", "peer=10.0.0.7 "); n != 2 {
		t.Errorf("%d WARN lines for the host after the window, want 2 (one per window)", n)
	}
	// Nothing held back: closing says nothing more.
	before := out.count("level=WARN")
	h.Close()
	if n := out.count("level=WARN"); n != before {
		t.Errorf("closing with nothing held back logged %d lines", n-before)
	}
}

// TestSourceLogTimerEndsTheWindow: without another failure, the timer
// ends the window and says what was held back.
func TestSourceLogTimerEndsTheWindow(t *testing.T) {
	out := &lines{}
	s := newSourceLog(out.logger(), "refused things")
	defer s.close()
	now := time.Unix(1000, 0)
	s.now = func() time.Time { return now }
	for range 3 {
		s.note("10.0.0.9")
	}
	s.tick() // early: the window goes on
	if n := out.count("more refused things"); n != 0 {
		t.Fatalf("a summary before the window ended:\n%s", out.buf.String())
	}
	now = now.Add(sourceWindow)
	s.tick()
	if n := out.count("level=WARN", "2 more refused things from 10.0.0.9 in the last minute"); n != 1 {
		t.Fatalf("%d summary lines when the timer ended the window, want 1:\n%s", n, out.buf.String())
	}
	if !s.note("10.0.0.9") {
		t.Error("the first line of a new window is not loud")
	}
}
