package integration

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

// loopbackToken sends a bearer token over a plaintext loopback connection.
type loopbackToken string

func (b loopbackToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}
func (loopbackToken) RequireTransportSecurity() bool { return false }

// metricValue returns the value of one series (name{labels}, as /metrics
// writes it) in a text exposition, and whether it is there.
func metricValue(body, series string) (float64, bool) {
	for line := range strings.Lines(body) {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v, err == nil
		}
	}
	return 0, false
}

// TestRateLimitPerIdentity: with ddl_rate_per_identity 0.01 and a burst of
// 2, the token that made its 2 changes is refused the third over gRPC
// (ResourceExhausted with a RetryInfo), the CLI (which prints the
// retry-after) and HTTP (429 with Retry-After), nothing of it applies, and
// the other token is unaffected; /metrics counts the refusals by identity
// (--metrics-identity-labels) and by reason.
func TestRateLimitPerIdentity(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("ci "+tokenHash("ci-token")+" ddl,reader\ndeploy "+tokenHash("deploy-token")+" ddl,reader\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newServer(t)
	s.start("--auth-token-file", tokens, "--ddl-rate-per-identity", "0.01", "--ddl-burst-per-identity", "2", "--metrics-identity-labels", insecurePeerArg)
	dial := func(token string) pb.MetadataServiceClient {
		conn, err := grpc.NewClient(s.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(loopbackToken(token)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return pb.NewMetadataServiceClient(conn)
	}
	ci, deploy := dial("ci-token"), dial("deploy-token")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	for _, stmts := range []string{createKS, "CREATE TABLE ks.a (id int PRIMARY KEY)"} {
		if _, err := ci.Execute(ctx, &pb.ExecuteRequest{Statements: stmts}); err != nil {
			t.Fatalf("%s: %v", stmts, err)
		}
	}
	// One change per 100 s: the third is refused for about 100 s.
	_, err := ci.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.b (id int PRIMARY KEY)"})
	d, ok := client.RetryAfter(err)
	if status.Code(err) != codes.ResourceExhausted || !ok || d <= 0 || d > 100*time.Second ||
		!strings.Contains(err.Error(), "token:ci is over its rate of schema changes") || !strings.Contains(err.Error(), "retry after") {
		t.Fatalf("third change: %v (retry after %v, %v), want ResourceExhausted with a retry-after of at most 100s", err, d, ok)
	}
	// Dry runs are not charged, and say nothing is over.
	if r, err := ci.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.b (id int PRIMARY KEY)", DryRun: true}); err != nil || !r.DryRun {
		t.Fatalf("dry run: %v, %v", r, err)
	}

	// The CLI prints the code and the retry-after.
	if out, errOut, rc := s.cli("exec", "-e", "CREATE TABLE ks.b (id int PRIMARY KEY)", "--token", "ci-token"); rc == 0 ||
		!strings.Contains(errOut, "ResourceExhausted") || !strings.Contains(errOut, "retry after") {
		t.Errorf("exec: rc=%d stdout %q stderr %q, want ResourceExhausted with retry after", rc, out, errOut)
	}

	// HTTP: 429 with Retry-After in whole seconds.
	req, err := http.NewRequestWithContext(ctx, "POST", "http://"+s.httpAddr+"/v1/execute", strings.NewReader(`{"statements": "CREATE TABLE ks.b (id int PRIMARY KEY)"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer ci-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); resp.StatusCode != http.StatusTooManyRequests || err != nil || secs < 1 || secs > 100 ||
		!strings.Contains(string(body), "RATE_LIMITED") {
		t.Errorf("HTTP: %s, Retry-After %q, %s; want 429 with Retry-After 1..100", resp.Status, resp.Header.Get("Retry-After"), body)
	}

	// The other identity has its own bucket: two changes in one request.
	if _, err := deploy.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.c (id int PRIMARY KEY); CREATE TABLE ks.d (id int PRIMARY KEY)"}); err != nil {
		t.Fatalf("deploy: %v", err)
	}
	ks, err := deploy.GetKeyspace(ctx, &pb.GetKeyspaceRequest{Keyspace: "ks"})
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for _, tb := range ks.Keyspace.Tables {
		tables = append(tables, tb.Name)
	}
	if strings.Join(tables, ",") != "a,c,d" {
		t.Errorf("tables %v, want a,c,d: nothing of the refused requests applied", tables)
	}

	// And a request without a token is refused by auth, before the limit.
	if _, err := s.client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.e (id int PRIMARY KEY)"}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("no token: %v", err)
	}

	code, metrics := httpDo(t, "GET", "http://"+s.httpAddr+"/metrics", "")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	for series, want := range map[string]float64{
		`metalog_ddl_rate_limited_total{identity="token:ci"}`:          3,
		`metalog_requests_refused_total{reason="rate_limited"}`:        3,
		`metalog_requests_refused_total{reason="unauthenticated"}`:     1,
		`metalog_requests_refused_total{reason="too_many_statements"}`: 0,
	} {
		if got, ok := metricValue(metrics, series); !ok || got != want {
			t.Errorf("%s = %v (%v), want %v", series, got, ok, want)
		}
	}
	if _, ok := metricValue(metrics, `metalog_ddl_rate_limited_total{identity="token:deploy"}`); ok {
		t.Error("token:deploy was counted as rate limited")
	}
}
