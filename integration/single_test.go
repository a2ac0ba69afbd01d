package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// httpDo sends a request and returns the status code and the body.
func httpDo(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestSingleNodeDDLSurvivesKill9(t *testing.T) {
	s := newServer(t)
	s.start()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := s.client()

	// gRPC: a keyspace and a table in one request, one result each.
	resp, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; CREATE TABLE shop.orders (id uuid PRIMARY KEY, total decimal)"})
	if err != nil {
		t.Fatalf("execute over gRPC: %v", err)
	}
	if resp.Epoch != 2 || len(resp.Results) != 2 || resp.Results[1].Kind != "CREATE TABLE" || !resp.Results[1].Applied {
		t.Fatalf("execute response = %v", resp)
	}

	// HTTP: a compound primary key.
	code, body := httpDo(t, "POST", "http://"+s.httpAddr+"/v1/execute",
		`{"statements": "CREATE TABLE shop.items (sku text, ts timestamp, qty int, PRIMARY KEY (sku, ts))"}`)
	if code != 200 {
		t.Fatalf("POST /v1/execute: %d %s", code, body)
	}
	var out struct {
		Epoch   string `json:"epoch"`
		Results []struct {
			Kind    string `json:"kind"`
			Table   string `json:"table"`
			Applied bool   `json:"applied"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	if out.Epoch != "3" || len(out.Results) != 1 || out.Results[0].Table != "items" {
		t.Fatalf("POST /v1/execute = %s", body)
	}

	// A composite partition key through the CLI.
	stdout, stderr, rc := s.cli("exec", "-e", "CREATE TABLE shop.events (day date, shard int, at timeuuid, what text, PRIMARY KEY ((day, shard), at))")
	if rc != 0 || !strings.Contains(stdout, "epoch 4") {
		t.Fatalf("metalog exec: rc=%d stdout=%q stderr=%q", rc, stdout, stderr)
	}

	// A bad statement in the middle: an error and no change at all.
	_, err = c.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE shop.a (id int PRIMARY KEY); CREATE TABLE shop.b (id int PRIMRY KEY); CREATE TABLE shop.c (id int PRIMARY KEY)"})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "line 1:") {
		t.Fatalf("bad statement: got %v, want InvalidArgument with line:column", err)
	}
	_, err = c.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE shop.a (id int PRIMARY KEY); CREATE TABLE shop.orders (id int PRIMARY KEY)"})
	if status.Code(err) != codes.AlreadyExists || !strings.Contains(err.Error(), "shop.orders") {
		t.Fatalf("existing table: got %v, want AlreadyExists naming shop.orders", err)
	}
	sch, err := c.GetSchema(ctx, &pb.GetSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if sch.Epoch != 4 || len(sch.Keyspaces) != 1 || len(sch.Keyspaces[0].Tables) != 3 {
		t.Fatalf("schema after refused requests: epoch %d, %v", sch.Epoch, sch.Keyspaces)
	}

	// HTTP errors map to statuses.
	for _, tc := range []struct {
		method, path, body string
		want               int
	}{
		{"POST", "/v1/execute", `{"statements": "CREATE TABLE shop.orders (id int PRIMARY KEY)"}`, 409},
		{"POST", "/v1/execute", `{"statements": "DROP TABLE shop.nope"}`, 404},
		{"POST", "/v1/execute", `{"statements": "CREATE TABLE"}`, 400},
		{"POST", "/v1/execute", `{"statements": `, 400},
		{"GET", "/v1/keyspaces/nope", "", 404},
		{"GET", "/v1/keyspaces/shop/tables/nope", "", 404},
	} {
		code, body := httpDo(t, tc.method, "http://"+s.httpAddr+tc.path, tc.body)
		if code != tc.want {
			t.Errorf("%s %s %s: status %d (%s), want %d", tc.method, tc.path, tc.body, code, body, tc.want)
		}
	}

	// Reads: JSON and CQL.
	code, body = httpDo(t, "GET", "http://"+s.httpAddr+"/v1/keyspaces/shop/tables/orders", "")
	if code != 200 || !strings.Contains(body, `"name":"total"`) && !strings.Contains(body, `"name": "total"`) {
		t.Fatalf("GET table: %d %s", code, body)
	}
	code, body = httpDo(t, "GET", "http://"+s.httpAddr+"/v1/schema?format=cql", "")
	if code != 200 || !strings.Contains(body, "CREATE TABLE shop.items") {
		t.Fatalf("GET schema?format=cql: %d %s", code, body)
	}
	stdout, stderr, rc = s.cli("describe", "shop.orders")
	if rc != 0 || !strings.Contains(stdout, "CREATE TABLE shop.orders") || !strings.Contains(stdout, "total decimal") {
		t.Fatalf("metalog describe shop.orders: rc=%d %q %q", rc, stdout, stderr)
	}
	before, _, _ := s.cli("describe")

	// kill -9 and restart: everything acknowledged is there.
	s.kill()
	s.start()
	after, stderr, rc := s.cli("describe")
	if rc != 0 || after != before {
		t.Fatalf("schema after kill -9 and restart differs:\nbefore:\n%s\nafter:\n%s\n%s", before, after, stderr)
	}
	sch, err = s.client().GetSchema(ctx, &pb.GetSchemaRequest{})
	if err != nil || sch.Epoch != 4 {
		t.Fatalf("epoch after restart: %v, %v", sch.GetEpoch(), err)
	}
	// And the node keeps taking changes, then drains cleanly.
	if _, err := s.client().Execute(ctx, &pb.ExecuteRequest{Statements: "DROP TABLE shop.events"}); err != nil {
		t.Fatal(err)
	}
	s.stop()
	s.start()
	if _, err := s.client().GetTable(ctx, &pb.GetTableRequest{Keyspace: "shop", Table: "events"}); status.Code(err) != codes.NotFound {
		t.Fatalf("dropped table after drain and restart: %v", err)
	}
}
