package integration

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// ulimitBinary writes a script that runs the metalog binary with an
// open-file limit of nofile (soft and hard: Go cannot raise it).
func ulimitBinary(t *testing.T, nofile int) string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "metalog-ulimit")
	text := fmt.Sprintf("#!/bin/sh\nulimit -n %d || exit 97\nexec '%s' \"$@\"\n", nofile, binary)
	if err := os.WriteFile(script, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// readyzBody is GET /readyz through hc.
func readyzBody(ctx context.Context, hc *http.Client, s *server) (int, string, error) {
	a := httpSend(ctx, hc, "GET", "http://"+s.httpAddr+"/readyz", "", "")
	return a.status, a.body, a.err
}

// floodUntilShort opens idle connections to addr until s logs that it ran
// out of file descriptors, and returns them.
func floodUntilShort(t *testing.T, s *server, addr string, most int) []net.Conn {
	t.Helper()
	var flood []net.Conn
	waitFor(t, time.Minute, "the member to run out of file descriptors", func() error {
		for range 16 {
			if len(flood) >= most {
				t.Fatalf("%d idle connections and the member has descriptors left", len(flood))
			}
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				return err
			}
			flood = append(flood, c)
		}
		if !strings.Contains(s.stderr.String(), "too many open files") {
			return fmt.Errorf("%d idle connections, the member accepts on", len(flood))
		}
		return nil
	})
	return flood
}

// TestFloodDescriptorShortageRecovers: a member with an open-file limit of
// 256 and the connection caps lifted is flooded with idle HTTP connections
// until it runs out of descriptors. Meanwhile a DDL over an HTTP
// connection opened before is answered (the gateway needs no descriptor),
// and a snapshot fails for want of one (/readyz degraded). Once the flood
// ends, with nothing more applied, /readyz is ready again (the snapshot
// was tried again and stored), and new HTTP and gRPC clients, DDL and a
// backup save all work.
func TestFloodDescriptorShortageRecovers(t *testing.T) {
	s := newServer(t)
	s.bin = ulimitBinary(t, 256)
	s.start("--max-connections", "100000", "--max-connections-per-source", "100000",
		"--snapshot-interval-entries", "4", "--snapshot-catch-up-entries", "1",
		"--request-read-timeout", "5m", "--idle-timeout", "5m")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rpc := s.client()
	if _, err := rpc.ListMembers(ctx, &pb.ListMembersRequest{}); err != nil {
		t.Fatal(err)
	}
	// One HTTP connection, opened before the flood and kept.
	kept := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}}
	defer kept.CloseIdleConnections()
	if code, body, err := readyzBody(ctx, kept, s); err != nil || code != http.StatusOK {
		t.Fatalf("readyz: %d %s %v", code, body, err)
	}

	flood := floodUntilShort(t, s, s.httpAddr, 2048)
	defer func() {
		for _, c := range flood {
			c.Close()
		}
	}()
	if a := httpSend(ctx, kept, "POST", "http://"+s.httpAddr+"/v1/execute", "", `{"statements": "`+createKS+`"}`); a.err != nil || a.status != http.StatusOK {
		t.Errorf("DDL over HTTP while the member has no descriptor left: %d %s %v, want 200", a.status, a.body, a.err)
		if _, err := rpc.Execute(ctx, &pb.ExecuteRequest{Statements: createKS}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; ; i++ {
		if _, err := rpc.Execute(ctx, &pb.ExecuteRequest{Statements: fmt.Sprintf("CREATE TABLE ks.t%d (id int PRIMARY KEY)", i)}); err != nil {
			t.Fatalf("DDL over gRPC while the member has no descriptor left: %v", err)
		}
		_, body, err := readyzBody(ctx, kept, s)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(body, "degraded") && strings.Contains(body, "too many open files") {
			break
		}
		if i == 40 {
			t.Fatalf("no snapshot failed for want of descriptors after %d DDL: readyz %s", i+1, body)
		}
	}

	for _, c := range flood {
		c.Close()
	}
	flood = nil
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	waitFor(t, time.Minute, "/readyz ready and not degraded once the flood ended, with nothing applied since", func() error {
		code, body, err := readyzBody(ctx, fresh, s)
		if err != nil || code != http.StatusOK || !strings.HasPrefix(body, "ok:") {
			return fmt.Errorf("%d %q %v", code, body, err)
		}
		return nil
	})
	checkNewClientsServed(t, ctx, s, fresh)
}

// checkNewClientsServed checks that new clients are served: DDL over a
// new HTTP connection and a new gRPC connection, and a backup save.
func checkNewClientsServed(t *testing.T, ctx context.Context, s *server, fresh *http.Client) {
	t.Helper()
	if a := httpSend(ctx, fresh, "POST", "http://"+s.httpAddr+"/v1/execute", "", `{"statements": "CREATE TABLE ks.after_http (id int PRIMARY KEY)"}`); a.err != nil || a.status != http.StatusOK {
		t.Errorf("DDL over a new HTTP connection: %d %s %v", a.status, a.body, a.err)
	}
	conn, err := grpc.NewClient(s.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := pb.NewMetadataServiceClient(conn).Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.after_grpc (id int PRIMARY KEY)"}); err != nil {
		t.Errorf("DDL over a new gRPC connection: %v", err)
	}
	path := filepath.Join(t.TempDir(), "backup.snap")
	if out, errOut, rc := s.cli("backup", "save", path); rc != 0 {
		t.Errorf("backup save: rc=%d %s %s", rc, out, errOut)
	} else if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Errorf("snapshot file: %v %v", fi, err)
	}
}

// TestFloodDefaultCapsKeepDescriptors: a member with an open-file limit of
// 256 and the default connection caps (worked out from that limit) is
// flooded with 300 idle connections from 127.0.0.2 to each client
// listener (the CQL listener, on by default, too): past the caps they are closed, the member keeps descriptors
// for itself, and clients from 127.0.0.1 are served (DDL over HTTP and
// gRPC, a snapshot stored and one saved, /readyz ready and not degraded).
func TestFloodDefaultCapsKeepDescriptors(t *testing.T) {
	s := newServer(t)
	s.bin = ulimitBinary(t, 256)
	s.start("--snapshot-interval-entries", "4", "--snapshot-catch-up-entries", "1")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var flood []net.Conn
	defer func() {
		for _, c := range flood {
			c.Close()
		}
	}()
	for _, addr := range []string{s.httpAddr, s.grpcAddr, s.cqlAddr} {
		for range 300 {
			c, err := dialFrom("127.0.0.2", addr)
			if err != nil {
				t.Fatal(err)
			}
			flood = append(flood, c)
		}
	}
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	if a := httpSend(ctx, fresh, "GET", "http://"+s.httpAddr+"/healthz", "", ""); a.err != nil || a.status != http.StatusOK {
		t.Fatalf("/healthz from 127.0.0.1 during the flood: %d %v", a.status, a.err)
	}
	if a := httpSend(ctx, fresh, "POST", "http://"+s.httpAddr+"/v1/execute", "", `{"statements": "`+createKS+`"}`); a.err != nil || a.status != http.StatusOK {
		t.Fatalf("DDL over HTTP during the flood: %d %s %v", a.status, a.body, a.err)
	}
	rpc := s.client()
	for i := range 8 {
		short, stop := context.WithTimeout(ctx, 10*time.Second)
		_, err := rpc.Execute(short, &pb.ExecuteRequest{Statements: fmt.Sprintf("CREATE TABLE ks.t%d (id int PRIMARY KEY)", i)})
		stop()
		if err != nil {
			t.Fatalf("DDL over gRPC during the flood: %v", err)
		}
	}
	s.waitLog(30*time.Second, "snapshot stored")
	if code, body, err := readyzBody(ctx, fresh, s); err != nil || code != http.StatusOK || !strings.HasPrefix(body, "ok:") {
		t.Errorf("/readyz during the flood: %d %q %v, want ok", code, body, err)
	}
	checkNewClientsServed(t, ctx, s, fresh)
	if strings.Contains(s.stderr.String(), "too many open files") {
		t.Errorf("the member ran out of file descriptors:\n%s", s.stderr.String())
	}
}
