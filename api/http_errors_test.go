package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/member"
)

// testHTTP is the HTTP listener's handler over f, with the gateway calling
// the handlers directly instead of over a gRPC connection.
func testHTTP(t *testing.T, f *fakeMember) http.Handler {
	t.Helper()
	svc, reg := newTestService(f)
	rt, err := newRoutes()
	if err != nil {
		t.Fatal(err)
	}
	gw := newGateway(rt)
	if err := pb.RegisterMetadataServiceHandlerServer(context.Background(), gw, svc); err != nil {
		t.Fatal(err)
	}
	cfg := testOptions()
	return httpHandler(&cfg, reg, svc.metrics, f, rt, gw)
}

// gatewayForm is the gateway's JSON error form.
type gatewayForm struct {
	Code    *int              `json:"code"`
	Message string            `json:"message"`
	Details []json.RawMessage `json:"details"`
}

// httpCase is one request and what its answer must hold.
type httpCase struct {
	method, target, body string
	status               int
	code                 codes.Code // in the error form; OK for a success
	contains             []string   // in the message (or the body of a success)
	allow                string     // the Allow header, when set
}

func (tc httpCase) check(t *testing.T, resp *http.Response) {
	t.Helper()
	b, _ := io.ReadAll(resp.Body)
	what := tc.method + " " + tc.target
	if resp.StatusCode != tc.status {
		t.Errorf("%s: %d %s, want %d", what, resp.StatusCode, b, tc.status)
		return
	}
	if got := resp.Header.Get("Allow"); got != tc.allow {
		t.Errorf("%s: Allow %q, want %q", what, got, tc.allow)
	}
	text := string(b)
	if tc.code != codes.OK {
		var f gatewayForm
		if err := json.Unmarshal(b, &f); err != nil || f.Code == nil || f.Details == nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s: %s (%s) is not the gateway's error form: %v", what, b, resp.Header.Get("Content-Type"), err)
			return
		}
		if codes.Code(*f.Code) != tc.code {
			t.Errorf("%s: code %d, want %d (%v)", what, *f.Code, tc.code, tc.code)
		}
		text = f.Message
	}
	for _, want := range tc.contains {
		if !strings.Contains(text, want) {
			t.Errorf("%s: %q lacks %q", what, text, want)
		}
	}
}

// routingCases are the answers of the routes and query parameters.
var routingCases = []httpCase{
	{method: "PUT", target: "/v1/schema", status: 405, code: codes.Unimplemented, allow: "GET", contains: []string{"PUT", "/v1/schema", "GET"}},
	{method: "DELETE", target: "/v1/guardrails", status: 405, code: codes.Unimplemented, allow: "GET, PUT"},
	{method: "GET", target: "/v1/execute", status: 405, code: codes.Unimplemented, allow: "POST"},
	{method: "POST", target: "/v1/cluster/members/n2", status: 405, code: codes.Unimplemented, allow: "DELETE", contains: []string{"/v1/cluster/members/{id}"}},
	{method: "GET", target: "/v1/cluster/members/n2/repair", status: 405, code: codes.Unimplemented, allow: "POST"},
	{method: "HEAD", target: "/v1/keyspaces/shop", status: 405, code: codes.Unimplemented, allow: "GET"},
	{method: "GET", target: "/v1/cluster/members", status: 200},
	{method: "GET", target: "/v1/schema?min_epch=5", status: 400, code: codes.InvalidArgument,
		contains: []string{`unknown query parameter "min_epch"`, "did you mean min_epoch?", "GET /v1/schema takes at_epoch, consistency, format, min_epoch"}},
	{method: "GET", target: "/v1/schema?min_epoch=2&format=cql&consistency=local", status: 200, contains: []string{`"epoch":"2"`}},
	{method: "GET", target: "/v1/schema?minEpoch=2", status: 200},
	{method: "GET", target: "/v1/keyspaces/shop?keyspace=other", status: 400, code: codes.InvalidArgument,
		contains: []string{`"keyspace"`, "GET /v1/keyspaces/{keyspace} takes at_epoch, consistency, format, min_epoch"}},
	{method: "POST", target: "/v1/execute?atomic=true", body: `{"statements": "x"}`, status: 400, code: codes.InvalidArgument,
		contains: []string{`"atomic"`, "POST /v1/execute takes none: the request is the JSON body"}},
	{method: "GET", target: "/v1/cluster/members?verbose=1", status: 400, code: codes.InvalidArgument, contains: []string{"GET /v1/cluster/members takes none"}},
	{method: "GET", target: "/v1/schema?min_epoch=99999999999999999999", status: 400, code: codes.InvalidArgument,
		contains: []string{`query parameter min_epoch="99999999999999999999": out of range (at most 18446744073709551615)`}},
	{method: "GET", target: "/v1/schema?min_epoch=soon", status: 400, code: codes.InvalidArgument, contains: []string{`query parameter min_epoch="soon": not an integer`}},
	{method: "GET", target: "/nope", status: 404, code: codes.NotFound, contains: []string{`no such path "/nope"`}},
	{method: "GET", target: "/v1/nope", status: 404, code: codes.NotFound, contains: []string{`no such path "/v1/nope"`}},
	{method: "GET", target: "/debug/pprof/", status: 404, code: codes.NotFound},
	{method: "GET", target: "/healthz", status: 200, contains: []string{"ok"}},
}

// guardrailBodyCases are PUT /v1/guardrails bodies: numbers and booleans
// are taken as their text, anything else is refused by name.
var guardrailBodyCases = []struct {
	body string
	want map[string]string // what the member is asked to set; nil for a refusal
	msg  string
}{
	{`{"set": {"tables_warn_threshold": 500, "drop_keyspace_enabled": false}}`, map[string]string{"tables_warn_threshold": "500", "drop_keyspace_enabled": "false"}, ""},
	{`{"set": {"tables_warn_threshold": "500", "table_properties_warned": "comment"}, "request_id": "r1"}`, map[string]string{"tables_warn_threshold": "500", "table_properties_warned": "comment"}, ""},
	{`{"set": {"tables_fail_threshold": -1, "tables_warn_threshold": 99999999999999999999}}`, map[string]string{"tables_fail_threshold": "-1", "tables_warn_threshold": "99999999999999999999"}, ""},
	{`{"requestId": "r2", "set": {"alter_table_enabled": true}}`, map[string]string{"alter_table_enabled": "true"}, ""},
	{`{"set": {"tables_warn_threshold": [500]}}`, nil, `set: tables_warn_threshold is an array; want a string, a number or a boolean`},
	{`{"set": {"tables_warn_threshold": {"value": 500}}}`, nil, `set: tables_warn_threshold is an object; want a string, a number or a boolean`},
	{`{"set": {"tables_warn_threshold": null}}`, nil, `set: tables_warn_threshold is null; want a string, a number or a boolean`},
	{`{"set": {"a": 1, "a": 2}}`, nil, `set: a is given twice`},
	{`{"set": 5}`, nil, "request body is not a valid JSON request"},
	{`{"set": {"a": 1}, "bogus": 1}`, nil, "bogus"},
	{`[1]`, nil, "request body is not a valid JSON request"},
}

// TestHTTPRoutingErrors: a wrong method is 405 with Allow, an unknown
// query parameter 400 naming it, an unknown path a JSON 404, everywhere.
func TestHTTPRoutingErrors(t *testing.T) {
	h := testHTTP(t, &fakeMember{view: shopView(t)})
	for _, tc := range routingCases {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body)))
		tc.check(t, w.Result())
	}
}

// TestHTTPGuardrailNumbers: PUT /v1/guardrails takes numbers and booleans
// as values, and refuses other JSON values naming the setting.
func TestHTTPGuardrailNumbers(t *testing.T) {
	for _, tc := range guardrailBodyCases {
		f := &fakeMember{view: shopView(t)}
		w := httptest.NewRecorder()
		testHTTP(t, f).ServeHTTP(w, httptest.NewRequest("PUT", "/v1/guardrails", strings.NewReader(tc.body)))
		if tc.want == nil {
			httpCase{method: "PUT", target: tc.body, status: 400, code: codes.InvalidArgument, contains: []string{tc.msg}}.check(t, w.Result())
			if len(f.sets) != 0 {
				t.Errorf("%s: the member was asked to set %v", tc.body, f.sets)
			}
			continue
		}
		if w.Code != 200 || len(f.sets) != 1 || fmt.Sprint(f.sets[0]) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %d %s, member asked %v, want %v", tc.body, w.Code, w.Body, f.sets, tc.want)
		}
	}
}

// TestHTTPStatementLimitIs413: the statement limit is 413 over HTTP (a
// retry would fail the same way) and keeps its gRPC code and message;
// other ResourceExhausted answers stay 429.
func TestHTTPStatementLimitIs413(t *testing.T) {
	f := &fakeMember{view: shopView(t)}
	h := testHTTP(t, f)
	msg := "execute: 3 statements in one request, more than the limit of 2 (max_statements_per_request); nothing was applied: split the request"
	for _, tc := range []struct {
		err    error
		status int
	}{
		{&limitErr{msg, member.ErrTooManyStatements}, http.StatusRequestEntityTooLarge},
		{status.Error(codes.ResourceExhausted, msg), http.StatusTooManyRequests},
	} {
		f.err = tc.err
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", "/v1/execute", strings.NewReader(`{"statements": "x"}`)))
		httpCase{method: "POST", target: fmt.Sprintf("/v1/execute (%T)", tc.err), status: tc.status, code: codes.ResourceExhausted, contains: []string{msg}}.check(t, w.Result())
	}

	// Over gRPC: the code and the message as the member made them.
	svc, _ := newTestService(f)
	f.err = &limitErr{msg, member.ErrTooManyStatements}
	_, err := svc.Execute(context.Background(), &pb.ExecuteRequest{Statements: "x"})
	if status.Code(err) != codes.ResourceExhausted || status.Convert(err).Message() != msg {
		t.Errorf("gRPC: %v, want ResourceExhausted %q", err, msg)
	}
}

// limitErr is an error matching a member's limit sentinel with msg as its
// whole message, as the member's are.
type limitErr struct {
	msg   string
	limit error
}

func (e *limitErr) Error() string        { return e.msg }
func (e *limitErr) Is(target error) bool { return target == e.limit }

// TestHTTPNoSpaceIs507: a DDL or guardrail change refused by the NOSPACE
// alarm is 507 Insufficient Storage over HTTP, and ResourceExhausted with
// the member's message over gRPC.
func TestHTTPNoSpaceIs507(t *testing.T) {
	f := &fakeMember{view: shopView(t)}
	h := testHTTP(t, f)
	msg := "NOSPACE alarm: data dir /var/lib/metalog: its filesystem has 1048576 bytes free, less than min_free_space_bytes (67108864); DDL and guardrail changes are refused until space is freed (reads and watch go on); nothing of this request was applied"
	f.err = &limitErr{msg, member.ErrNoSpace}
	for _, r := range []struct{ method, target, body string }{
		{"POST", "/v1/execute", `{"statements": "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}`},
		{"PUT", "/v1/guardrails", `{"set": {"tables_warn_threshold": "5"}}`},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(r.method, r.target, strings.NewReader(r.body)))
		httpCase{method: r.method, target: r.target, status: http.StatusInsufficientStorage, code: codes.ResourceExhausted, contains: []string{msg}}.check(t, w.Result())
	}
	svc, _ := newTestService(f)
	_, err := svc.SetGuardrails(context.Background(), &pb.SetGuardrailsRequest{Set: map[string]string{"tables_warn_threshold": "5"}})
	if status.Code(err) != codes.ResourceExhausted || status.Convert(err).Message() != msg {
		t.Errorf("gRPC: %v, want ResourceExhausted %q", err, msg)
	}
}

// TestHTTPErrorsOnARealServer: the answers above from a running server,
// its gateway calling the gRPC listener.
func TestHTTPErrorsOnARealServer(t *testing.T) {
	srv, c := startServerWith(t, func(s *testSettings) { s.member.MaxStatementsPerRequest = 2 })
	hc := &http.Client{Timeout: 10 * time.Second}
	defer hc.CloseIdleConnections()
	do := func(tc httpCase) {
		t.Helper()
		req, err := http.NewRequest(tc.method, "http://"+srv.HTTPAddr()+tc.target, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		tc.check(t, resp)
	}
	three := `{"statements": "CREATE TABLE ks.a (id int PRIMARY KEY); CREATE TABLE ks.b (id int PRIMARY KEY); CREATE TABLE ks.c (id int PRIMARY KEY)"}`
	limit := "3 statements in one request, more than the limit of 2 (max_statements_per_request)"
	for _, tc := range []httpCase{
		{method: "PUT", target: "/v1/schema", status: 405, code: codes.Unimplemented, allow: "GET"},
		{method: "DELETE", target: "/v1/guardrails", status: 405, code: codes.Unimplemented, allow: "GET, PUT"},
		{method: "GET", target: "/v1/schema?min_epch=5", status: 400, code: codes.InvalidArgument, contains: []string{`"min_epch"`, "did you mean min_epoch?"}},
		{method: "PUT", target: "/v1/guardrails", body: `{"set": {"tables_warn_threshold": 500, "drop_keyspace_enabled": false}}`, status: 200,
			contains: []string{`"name":"tables_warn_threshold","value":"500"`, `"name":"drop_keyspace_enabled","value":"false"`}},
		{method: "PUT", target: "/v1/guardrails", body: `{"set": {"tables_warn_threshold": 99999999999999999999}}`, status: 400, code: codes.InvalidArgument,
			contains: []string{`guardrail tables_warn_threshold="99999999999999999999": out of range (at most 9223372036854775807)`}},
		{method: "POST", target: "/v1/execute", body: three, status: 413, code: codes.ResourceExhausted, contains: []string{limit}},
		{method: "GET", target: "/nope", status: 404, code: codes.NotFound, contains: []string{`no such path "/nope"`}},
		{method: "GET", target: "/v1/keyspaces/ks?min_epoch=1", status: 200, contains: []string{`"name":"ks"`}},
	} {
		do(tc)
	}
	_, err := c.Execute(context.Background(), &pb.ExecuteRequest{Statements: strings.Repeat("CREATE TABLE ks.a (id int PRIMARY KEY);", 3)})
	if want := "execute: " + limit + "; nothing was applied: split the request"; status.Code(err) != codes.ResourceExhausted || status.Convert(err).Message() != want {
		t.Errorf("gRPC: %v, want ResourceExhausted %q", err, want)
	}
}
