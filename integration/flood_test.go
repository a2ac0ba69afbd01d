package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// writeTokens writes a token file of "name roles" pairs; each name's
// token is name+"-token".
func writeTokens(t *testing.T, entries ...string) string {
	t.Helper()
	var b strings.Builder
	for _, e := range entries {
		name, roles, _ := strings.Cut(e, " ")
		fmt.Fprintf(&b, "%s %s %s\n", name, tokenHash(name+"-token"), roles)
	}
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// floodAnswer is the answer to one request: its status, and its body
// unless the request was a stream that opened (then resp is open).
type floodAnswer struct {
	status int
	body   string
	resp   *http.Response
	err    error
}

// httpSend sends method url with body (none when "") and token (none when
// ""), and returns the answer once its headers arrive; a 200 answer to a
// GET of /v1/watch is left open, any other answer read whole.
func httpSend(ctx context.Context, hc *http.Client, method, url, token, body string) floodAnswer {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return floodAnswer{err: err}
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return floodAnswer{err: err}
	}
	if resp.StatusCode == http.StatusOK && strings.Contains(url, "/v1/watch") {
		return floodAnswer{status: resp.StatusCode, resp: resp}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return floodAnswer{status: resp.StatusCode, body: string(b), err: err}
}

// openWatches opens n GET /v1/watch streams of token at once, each on a
// connection of its own, and returns their answers; it fails the test if
// any has no answer within limit (a stream that hangs instead of being
// refused). The streams that opened stay open until ctx ends.
func openWatches(t *testing.T, ctx context.Context, base, token string, n int, limit time.Duration) []floodAnswer {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	got := make(chan floodAnswer, n)
	for range n {
		go func() { got <- httpSend(ctx, hc, "GET", base+"/v1/watch", token, "") }()
	}
	var out []floodAnswer
	deadline := time.After(limit)
	for len(out) < n {
		select {
		case a := <-got:
			if a.err != nil {
				t.Fatalf("watch: %v", a.err)
			}
			out = append(out, a)
		case <-deadline:
			t.Fatalf("%d of %d watch requests of %q got no answer within %v (%d answered): they hang", n-len(out), n, token, limit, len(out))
		}
	}
	return out
}

// countStatus counts the answers by status and checks that each refused
// one (not 200) says want in its body.
func countStatus(t *testing.T, answers []floodAnswer, want map[int]string) map[int]int {
	t.Helper()
	counts := map[int]int{}
	for _, a := range answers {
		counts[a.status]++
		if a.status == http.StatusOK {
			continue
		}
		text, known := want[a.status]
		if !known || !strings.Contains(a.body, text) {
			t.Errorf("answer %d %s, want one of %v", a.status, a.body, want)
		}
	}
	return counts
}

// TestFloodWatchStreamsRefusedAtOnce: a reader whose token covers no
// keyspace opens 40 HTTP watch streams with max_watch_streams_per_identity
// 8: 8 open, 32 are refused at once with 429 (TOO_MANY_STREAMS), and so
// is its gRPC Watch (ResourceExhausted); another reader opens 4 more (the
// member's max_watch_streams 12) and its fifth is refused with 503. All
// the while a ddl token's DDL over HTTP and over gRPC, the other reader's
// GET /v1/schema and an unauthenticated /healthz are answered; once the
// flood ends, the reader may watch again, and /metrics counts the
// refusals.
func TestFloodWatchStreamsRefusedAtOnce(t *testing.T) {
	tokens := writeTokens(t, "flood reader@nosuchks", "other reader", "ci ddl,reader")
	s := newServer(t)
	s.start("--auth-token-file", tokens, "--max-watch-streams-per-identity", "8", "--max-watch-streams", "12", insecurePeerArg)
	base := "http://" + s.httpAddr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	floodCtx, endFlood := context.WithCancel(ctx)
	defer endFlood()

	flood := openWatches(t, floodCtx, base, "flood-token", 40, 30*time.Second)
	if c := countStatus(t, flood, map[int]string{429: "max_watch_streams_per_identity"}); c[200] != 8 || c[429] != 32 {
		t.Fatalf("40 watches of one identity: %v, want 8 open (200) and 32 refused (429)", c)
	}
	if !strings.Contains(flood[len(flood)-1].body+flood[0].body, "TOO_MANY_STREAMS") {
		t.Errorf("no TOO_MANY_STREAMS reason in the refusals: %q", flood[len(flood)-1].body)
	}
	conn, err := grpc.NewClient(s.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(loopbackToken("flood-token")))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := pb.NewMetadataServiceClient(conn).Watch(ctx, &pb.WatchRequest{})
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "token:flood has 8 streams") {
		t.Errorf("gRPC watch of the flooding identity: %v, want ResourceExhausted naming token:flood", err)
	}

	other := openWatches(t, floodCtx, base, "other-token", 4, 30*time.Second)
	if c := countStatus(t, other, nil); c[200] != 4 {
		t.Fatalf("another identity's 4 watches: %v, want 4 open", c)
	}
	more := openWatches(t, floodCtx, base, "other-token", 1, 30*time.Second)
	countStatus(t, more, map[int]string{503: "max_watch_streams"})
	if more[0].status != http.StatusServiceUnavailable {
		t.Errorf("a watch past the member's limit: %d, want 503", more[0].status)
	}

	// Others are answered while the streams stay open.
	hc := &http.Client{Timeout: 30 * time.Second}
	defer hc.CloseIdleConnections()
	for _, c := range []struct {
		method, path, token, body string
	}{
		{"POST", "/v1/execute", "ci-token", `{"statements": "` + createKS + `"}`},
		{"GET", "/v1/schema", "other-token", ""},
		{"GET", "/healthz", "", ""},
	} {
		if a := httpSend(ctx, hc, c.method, base+c.path, c.token, c.body); a.err != nil || a.status != http.StatusOK {
			t.Errorf("%s %s (%q) during the flood: %d %s %v, want 200", c.method, c.path, c.token, a.status, a.body, a.err)
		}
	}
	ci, err := grpc.NewClient(s.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(loopbackToken("ci-token")))
	if err != nil {
		t.Fatal(err)
	}
	defer ci.Close()
	if _, err := pb.NewMetadataServiceClient(ci).Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.t (id int PRIMARY KEY)"}); err != nil {
		t.Errorf("gRPC DDL during the flood: %v", err)
	}

	// The flood ends: its streams are let go, and the reader may watch again.
	endFlood()
	waitFor(t, 30*time.Second, "a watch of the flooding identity once its streams ended", func() error {
		wctx, stop := context.WithCancel(ctx)
		defer stop()
		if a := openWatches(t, wctx, base, "flood-token", 1, 30*time.Second)[0]; a.status != http.StatusOK {
			return fmt.Errorf("%d %s", a.status, a.body)
		}
		return nil
	})
	_, body := httpDo(t, "GET", base+"/metrics", "")
	if v, ok := metricValue(body, `metalog_requests_refused_total{reason="too_many_streams"}`); !ok || v < 34 {
		t.Errorf("metalog_requests_refused_total{reason=\"too_many_streams\"} = %v (%v), want at least 34", v, ok)
	}
}

// TestFloodGatewayNotABottleneck: with max_concurrent_requests_per_connection
// 2, a gRPC connection carries 32 streams; 48 HTTP watch streams all open,
// and a DDL and a read over HTTP are answered meanwhile: the gateway's
// calls do not queue behind one connection of its own.
func TestFloodGatewayNotABottleneck(t *testing.T) {
	s := newServer(t)
	s.start("--max-concurrent-requests-per-connection", "2")
	base := "http://" + s.httpAddr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	watches := openWatches(t, ctx, base, "", 48, 30*time.Second)
	if c := countStatus(t, watches, nil); c[200] != 48 {
		t.Fatalf("48 watches: %v, want all open", c)
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	defer hc.CloseIdleConnections()
	if a := httpSend(ctx, hc, "POST", base+"/v1/execute", "", `{"statements": "`+createKS+`"}`); a.err != nil || a.status != http.StatusOK {
		t.Errorf("DDL over HTTP with 48 watches open: %d %s %v", a.status, a.body, a.err)
	}
	if a := httpSend(ctx, hc, "GET", base+"/v1/schema", "", ""); a.err != nil || a.status != http.StatusOK || !strings.Contains(a.body, `"ks"`) {
		t.Errorf("GET /v1/schema with 48 watches open: %d %s %v", a.status, a.body, a.err)
	}
}
