package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// TestHistoryNamesWhoChanged: with tokens and client certificates, every
// event names the identity that made the change (token:NAME, cert:CN),
// and reading the history and the feed needs the reader role.
func TestHistoryNamesWhoChanged(t *testing.T) {
	s, ca := securedServer(t)
	crt := func(name string) []string {
		return []string{"--cacert", ca.caFile, "--cert", filepath.Join(ca.dir, name+".crt"), "--key", filepath.Join(ca.dir, name+".key")}
	}
	for _, args := range [][]string{
		append([]string{"exec", "-e", createKS + "; CREATE TABLE ks.t (id int PRIMARY KEY)"}, crt("app")...),
		{"guardrails", "set", "tables_warn_threshold=5", "--cacert", ca.caFile, "--token", "ops-token"},
		{"exec", "-e", "CREATE TABLE ks.u (id int PRIMARY KEY)", "--cacert", ca.caFile, "--token", "ci-token"},
	} {
		if out, errOut, rc := s.cli(args...); rc != 0 {
			t.Fatalf("%v: rc=%d %s %s", args, rc, out, errOut)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	reader := dialTLS(t, s.grpcAddr, ca.tlsConfig(""), grpc.WithPerRPCCredentials(bearerToken("reader-token")))
	from := uint64(0)
	h, err := reader.History(ctx, &pb.HistoryRequest{FromEpoch: &from})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range h.Events {
		got = append(got, fmt.Sprintf("%d %s %s", e.Epoch, e.Principal, e.Kind))
		if e.Time == nil || time.Since(e.Time.AsTime()) > time.Minute {
			t.Errorf("epoch %d: time %v, want when it was asked", e.Epoch, e.Time)
		}
	}
	want := "1 cert:app CREATE KEYSPACE\n2 cert:app CREATE TABLE\n3 token:ops SET GUARDRAILS\n4 token:ci CREATE TABLE"
	if strings.Join(got, "\n") != want {
		t.Fatalf("history:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}

	// The feed says the same, to a reader certificate.
	viewer := dialTLS(t, s.grpcAddr, ca.tlsConfig("viewer"))
	stream, err := viewer.Watch(ctx, &pb.WatchRequest{FromEpoch: &from, Keyspace: "ks", Table: "u"})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := stream.Recv()
	if err != nil || msg.Type != "events" || msg.Epoch != 4 || msg.Events[0].Principal != "token:ci" {
		t.Fatalf("first message of a watch of ks.u: %v, %v", msg, err)
	}

	// A ddl-only token can neither watch nor read the history.
	ci := dialTLS(t, s.grpcAddr, ca.tlsConfig(""), grpc.WithPerRPCCredentials(bearerToken("ci-token")))
	if _, err := ci.History(ctx, &pb.HistoryRequest{}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("history with a ddl-only token: %v, want PermissionDenied", err)
	}
	ws, err := ci.Watch(ctx, &pb.WatchRequest{})
	if err == nil {
		_, err = ws.Recv()
	}
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "needs role reader") {
		t.Fatalf("watch with a ddl-only token: %v, want PermissionDenied", err)
	}
}
