package api

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	pb "github.com/metalog/metalog/api/metalogpb"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestHealthReadyAndMetrics(t *testing.T) {
	srv, c := startServer(t, 0)
	base := "http://" + srv.HTTPAddr()
	if code, body := get(t, base+"/healthz"); code != 200 || !strings.Contains(body, "ok") {
		t.Fatalf("/healthz: %d %q", code, body)
	}
	if code, body := get(t, base+"/readyz"); code != 200 || !strings.Contains(body, "epoch 1") {
		t.Fatalf("/readyz: %d %q", code, body)
	}
	if _, err := c.Execute(context.Background(), &pb.ExecuteRequest{Statements: "CREATE TABLE ks.t (id int PRIMARY KEY)"}); err != nil {
		t.Fatal(err)
	}
	_, body := get(t, base+"/metrics")
	for _, want := range []string{
		"metalog_epoch 2",
		"metalog_schema_tables 1",
		// The history name (before the server is ready), the keyspace,
		// the table: one flush each with no flush window.
		"metalog_schema_flushes_total 3",
		`metalog_grpc_requests_total{code="OK",method="/metalog.v1.MetadataService/Execute"} 2`,
		"go_goroutines",
		"process_resident_memory_bytes",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
