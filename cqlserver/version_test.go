package cqlserver_test

import (
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/metalog/metalog/cqlserver/internal/wire"
)

// TestUnsupportedVersions sends OPTIONS frames of the versions the server
// does not speak, as raw bytes, and checks the answer: a PROTOCOL_ERROR
// naming the versions spoken, in a header of the client's own version
// when it is older (v1 and v2: eight bytes, a one-byte stream id), of v5
// when it is newer, then the connection closed.
func TestUnsupportedVersions(t *testing.T) {
	for _, tc := range []struct {
		name      string
		frame     []byte
		header    []byte // the answer's header, without its length
		headerLen int
	}{
		{"v1", []byte{0x01, 0, 7, 0x05, 0, 0, 0, 0}, []byte{0x81, 0, 7, 0x00}, 8},
		{"v2", []byte{0x02, 0, 0xfe, 0x05, 0, 0, 0, 0}, []byte{0x82, 0, 0xfe, 0x00}, 8},
		{"v3", []byte{0x03, 0, 0, 9, 0x05, 0, 0, 0, 0}, []byte{0x83, 0, 0, 9, 0x00}, 9},
		{"v6", []byte{0x06, 0, 0, 3, 0x05, 0, 0, 0, 0}, []byte{0x85, 0, 0, 3, 0x00}, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := start(t, &fakeWriter{exec: noWrites}, "", nil)
			if _, err := c.nc.Write(tc.frame); err != nil {
				t.Fatal(err)
			}
			c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			got, err := io.ReadAll(c.nc)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) < tc.headerLen || string(got[:tc.headerLen-4]) != string(tc.header) {
				t.Fatalf("answer % x, want a header % x", got, tc.header)
			}
			n := binary.BigEndian.Uint32(got[tc.headerLen-4:])
			if int(n) != len(got)-tc.headerLen {
				t.Fatalf("body length %d, %d bytes follow", n, len(got)-tc.headerLen)
			}
			d := wire.NewDecoder(got[tc.headerLen:])
			code, msg := wire.ErrorCode(d.Int()), d.Str()
			if d.Err() != nil || code != wire.CodeProtocol || !strings.Contains(msg, "supported versions are (4/v4, 5/v5)") {
				t.Errorf("error %v %q, %v", code, msg, d.Err())
			}
		})
	}
}

// TestGocqlV3 checks that gocql asking for protocol v3 fails at once on
// the server's refusal, rather than waiting for its timeout. (gocql
// v1.7.0 reports an ERROR answering its OPTIONS by its type, not its
// text.)
func TestGocqlV3(t *testing.T) {
	c := start(t, &fakeWriter{exec: noWrites}, "", nil)
	addr := c.nc.RemoteAddr().(*net.TCPAddr)
	cluster := gocql.NewCluster(addr.IP.String())
	cluster.Port = addr.Port
	cluster.ProtoVersion = 3
	cluster.Timeout, cluster.ConnectTimeout = time.Minute, time.Minute
	cluster.NumConns = 1
	cluster.DisableInitialHostLookup = true
	done := make(chan error, 1)
	go func() {
		session, err := cluster.CreateSession()
		if err == nil {
			session.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("gocql connected with protocol v3")
		}
		if msg := err.Error(); !strings.Contains(msg, "unsupported protocol version") && !strings.Contains(msg, "errorFrame") {
			t.Fatalf("gocql with protocol v3: %v, want the server's refusal", err)
		}
		t.Logf("gocql with protocol v3: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("gocql with protocol v3 still waits, with a timeout of a minute")
	}
}
