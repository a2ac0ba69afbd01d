package api

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// TestHistoryFiltersHTTPAndGRPC: the principal, since, until and kind
// filters of History, over gRPC and over HTTP query parameters (RFC 3339
// times), combined with the keyspace and table filter; a bad kind or time
// is InvalidArgument (HTTP 400).
func TestHistoryFiltersHTTPAndGRPC(t *testing.T) {
	srv, c := startServer(t, 0)
	base := "http://" + srv.HTTPAddr()
	ctx := context.Background()
	for _, s := range []string{
		"CREATE TABLE ks.t (id int PRIMARY KEY, v text)", // 2
		"ALTER TABLE ks.t ADD w int",                     // 3
		"CREATE TABLE ks.u (id int PRIMARY KEY)",         // 4
		"CREATE INDEX ON ks.t (v)",                       // 5
	} {
		if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: s}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := c.History(ctx, &pb.HistoryRequest{FromEpoch: proto.Uint64(0)})
	if err != nil || len(all.Events) != 5 {
		t.Fatalf("history: %v, %v", all, err)
	}
	// Times come from the events, not from a clock.
	cut := all.Events[2].Time // epoch 3's
	epochs := func(evs []*pb.Event) string {
		var out []string
		for _, e := range evs {
			out = append(out, e.Kind+" "+e.Table)
		}
		return strings.Join(out, ", ")
	}
	for _, tc := range []struct {
		name string
		req  *pb.HistoryRequest
		want string
	}{
		{"kind", &pb.HistoryRequest{FromEpoch: proto.Uint64(0), Kind: "create table"}, "CREATE TABLE t, CREATE TABLE u"},
		{"kind and table", &pb.HistoryRequest{FromEpoch: proto.Uint64(0), Kind: "CREATE TABLE", Keyspace: "ks", Table: "t"}, "CREATE TABLE t"},
		{"principal", &pb.HistoryRequest{FromEpoch: proto.Uint64(0), Principal: Anonymous, Keyspace: "ks", Table: "u"}, "CREATE TABLE u"},
		{"another principal", &pb.HistoryRequest{FromEpoch: proto.Uint64(0), Principal: "alice"}, ""},
		{"since", &pb.HistoryRequest{FromEpoch: proto.Uint64(0), Since: cut, Keyspace: "ks", Table: "t"}, "ALTER TABLE t, CREATE INDEX t"},
		{"until", &pb.HistoryRequest{Until: cut, Limit: 10, Kind: "CREATE TABLE"}, "CREATE TABLE t"},
	} {
		resp, err := c.History(ctx, tc.req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := epochs(resp.Events); got != tc.want {
			t.Errorf("%s over gRPC: %q, want %q", tc.name, got, tc.want)
		}
	}

	q := url.Values{"from_epoch": {"0"}, "kind": {"CREATE TABLE"}, "principal": {Anonymous},
		"since": {all.Events[1].Time.AsTime().Format(time.RFC3339Nano)}, "until": {cut.AsTime().Format(time.RFC3339Nano)}}
	code, body := get(t, base+"/v1/history?"+q.Encode())
	var page struct {
		Events []struct{ Kind, Table, Epoch string }
	}
	if err := json.Unmarshal([]byte(body), &page); code != 200 || err != nil {
		t.Fatalf("HTTP history with filters: %d %s %v", code, body, err)
	}
	if len(page.Events) != 1 || page.Events[0].Table != "t" || page.Events[0].Epoch != "2" {
		t.Errorf("HTTP history, CREATE TABLE by %s in [epoch 2's time, epoch 3's): %s", Anonymous, body)
	}
	if code, body := get(t, base+"/v1/history?kind=CREATE%20TABEL"); code != 400 || !strings.Contains(body, "no statement has this kind") {
		t.Errorf("HTTP history, unknown kind: %d %s", code, body)
	}
	if code, body := get(t, base+"/v1/history?since=yesterday"); code != 400 {
		t.Errorf("HTTP history, since=yesterday: %d %s", code, body)
	}
	_, err = c.History(ctx, &pb.HistoryRequest{Since: cut, Until: cut})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("since = until: %v, want InvalidArgument", err)
	}
	_, err = c.History(ctx, &pb.HistoryRequest{Since: &timestamppb.Timestamp{Seconds: 1, Nanos: -1}})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("a malformed timestamp: %v, want InvalidArgument", err)
	}
}
