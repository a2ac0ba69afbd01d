package api

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
	"github.com/metalog/metalog/schema/plan"
)

// reasonCase is a member error, the request that gets it over HTTP, and
// the answer it must have: gRPC code, ErrorInfo reason and metadata, HTTP
// status.
type reasonCase struct {
	name           string
	err            error
	method, target string
	body           string
	code           codes.Code
	reason         string
	md             map[string]string
	http           int
}

// reasonCases are the answers a program branches on, one per reason the
// member's errors carry.
func reasonCases() []reasonCase {
	hist := member.Identity{ClusterID: 0xc1, HistoryID: 0xa1}
	return []reasonCase{
		{"if_epoch", &metadata.EpochMovedError{Want: 3, Have: 5}, "POST", "/v1/execute", `{"statements":"x","if_epoch":"3"}`,
			codes.FailedPrecondition, "IF_EPOCH_CONFLICT", map[string]string{"if_epoch": "3", "epoch": "5"}, 400},
		{"if_epoch, as the log refuses it", &metadata.StatementError{Position: 1, Total: 1, Err: &metadata.EpochMovedError{Want: 3, Have: 5}}, "POST", "/v1/execute", `{"statements":"x"}`,
			codes.FailedPrecondition, "IF_EPOCH_CONFLICT", map[string]string{"if_epoch": "3", "epoch": "5"}, 400},
		{"impossible plan", &member.PlanRefusedError{Err: &plan.ImpossibleError{Changes: []plan.Impossible{{Object: "shop.a", Reason: "the key changes", Recreatable: true}}}},
			"POST", "/v1/plan", `{"desired":"x"}`,
			codes.FailedPrecondition, "PLAN_REFUSED", map[string]string{"object": "shop.a", "reason": "the key changes", "changes": "1"}, 400},
		{"plan refused at a statement", &member.PlanRefusedError{Statement: "DROP TABLE shop.a", Position: 2, Err: &metadata.StatementError{Position: 2, Total: 2, Err: errString("no")}},
			"POST", "/v1/plan", `{"desired":"x"}`,
			codes.FailedPrecondition, "PLAN_REFUSED", map[string]string{"statement": "DROP TABLE shop.a", "position": "2"}, 400},
		{"plan refused by a guardrail", &member.PlanRefusedError{Statement: "CREATE TABLE shop.b", Position: 1, Err: &guardrails.Failure{Guardrail: "tables_fail_threshold", Message: "too many"}},
			"POST", "/v1/plan", `{"desired":"x"}`,
			codes.FailedPrecondition, "GUARDRAIL", map[string]string{"guardrail": "tables_fail_threshold", "statement": "CREATE TABLE shop.b", "position": "1"}, 400},
		{"guardrail", &guardrails.Failure{Guardrail: "tables_fail_threshold", Message: "too many"}, "POST", "/v1/execute", `{"statements":"x"}`,
			codes.FailedPrecondition, "GUARDRAIL", map[string]string{"guardrail": "tables_fail_threshold"}, 400},
		{"history pruned", &metadata.PrunedError{From: 2, Oldest: 7, Retention: 10}, "GET", "/v1/history?from_epoch=2", "",
			codes.OutOfRange, "HISTORY_PRUNED", map[string]string{"oldest_epoch": "7", "from_epoch": "2", "history_retention_epochs": "10"}, 400},
		{"at_epoch pruned", errWrap("at_epoch 2", &metadata.PrunedError{From: 2, Oldest: 7, Retention: 10}), "GET", "/v1/schema?at_epoch=2", "",
			codes.OutOfRange, "HISTORY_PRUNED", map[string]string{"oldest_epoch": "7"}, 400},
		{"history changed", &member.HistoryChangedError{Op: "history", Requested: 0xb2, Identity: hist}, "GET", "/v1/history?history_id=b2", "",
			codes.FailedPrecondition, "HISTORY_CHANGED", map[string]string{"history_id": "a1", "requested_history_id": "b2", "cluster_id": "c1"}, 400},
		{"epoch ahead", &member.EpochAheadError{At: 99, Epoch: 5, HistoryID: 0xa1}, "GET", "/v1/schema?at_epoch=99", "",
			codes.OutOfRange, "EPOCH_AHEAD", map[string]string{"at_epoch": "99", "epoch": "5", "history_id": "a1"}, 400},
		{"scope", &member.ScopeError{Keyspace: "other"}, "POST", "/v1/execute", `{"statements":"x"}`,
			codes.PermissionDenied, "SCOPE", map[string]string{"keyspace": "other"}, 403},
		{"rate limited", &member.RateLimitError{Identity: "token:ci", Rate: 1, Burst: 1, RetryAfter: time.Second}, "POST", "/v1/execute", `{"statements":"x"}`,
			codes.ResourceExhausted, "RATE_LIMITED", map[string]string{"setting": "ddl_rate_per_identity", "identity": "token:ci"}, 429},
		{"no space", errWrap("member n1", member.ErrNoSpace), "POST", "/v1/execute", `{"statements":"x"}`,
			codes.ResourceExhausted, "NOSPACE", map[string]string{"setting": "min_free_space_bytes"}, 507},
		{"too many statements", errWrap("100 statements", member.ErrTooManyStatements), "POST", "/v1/execute", `{"statements":"x"}`,
			codes.ResourceExhausted, "TOO_MANY_STATEMENTS", map[string]string{"setting": "max_statements_per_request"}, 413},
		{"partially applied", &metadata.StatementError{Position: 2, Total: 2, Applied: 1, Err: errWrap("table t", errString("exists"))}, "POST", "/v1/execute", `{"statements":"x"}`,
			codes.Internal, "PARTIALLY_APPLIED", map[string]string{"applied": "1"}, 500},
		{"outcome unknown", &member.OutcomeUnknownError{RequestID: "r1", AppliedIndex: 41, Err: errString("no quorum")}, "POST", "/v1/execute", `{"statements":"x"}`,
			codes.DeadlineExceeded, "OUTCOME_UNKNOWN", map[string]string{"request_id": "r1", "applied_index": "41"}, 504},
		{"not proposed", errWrap("no leader", member.ErrNotProposed), "POST", "/v1/execute", `{"statements":"x"}`,
			codes.Unavailable, "NOT_PROPOSED", nil, 503},
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// wrapped is an error that says what and wraps err.
type wrapped struct {
	what string
	err  error
}

func (e *wrapped) Error() string { return e.what + ": " + e.err.Error() }
func (e *wrapped) Unwrap() error { return e.err }

func errWrap(what string, err error) error { return &wrapped{what, err} }

// TestEveryReasonHasItsCodeAndStatus: each error of the member a program
// branches on is answered with its gRPC code, an ErrorInfo (domain
// "metalog") of its reason and metadata, and its message, over gRPC
// (toStatus) and over HTTP, with the HTTP status the README lists.
func TestEveryReasonHasItsCodeAndStatus(t *testing.T) {
	for _, tc := range reasonCases() {
		st := status.Convert(toStatus(tc.err))
		info := errorInfoOf(st)
		if st.Code() != tc.code || st.Message() != tc.err.Error() || info == nil || info.GetReason() != tc.reason || info.GetDomain() != "metalog" {
			t.Errorf("%s: %v %q %v, want %v with ErrorInfo %s and the error's message", tc.name, st.Code(), st.Message(), info, tc.code, tc.reason)
			continue
		}
		for k, v := range tc.md {
			if got := info.GetMetadata()[k]; got != v {
				t.Errorf("%s: metadata %s=%q, want %q (%v)", tc.name, k, got, v, info.GetMetadata())
			}
		}

		f := &fakeMember{err: tc.err}
		w := httptest.NewRecorder()
		testHTTP(t, f).ServeHTTP(w, httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body)))
		var form struct {
			Code    int               `json:"code"`
			Details []json.RawMessage `json:"details"`
		}
		if w.Code != tc.http || json.Unmarshal(w.Body.Bytes(), &form) != nil || codes.Code(form.Code) != tc.code {
			t.Errorf("%s over HTTP: %d %s, want %d with code %d", tc.name, w.Code, w.Body, tc.http, tc.code)
			continue
		}
		if !strings.Contains(w.Body.String(), `"reason":"`+tc.reason+`"`) {
			t.Errorf("%s over HTTP: %s lacks reason %s", tc.name, w.Body, tc.reason)
		}
	}
}

// errorInfoOf returns st's metalog ErrorInfo, nil without one.
func errorInfoOf(st *status.Status) *errdetails.ErrorInfo {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == errorDomain {
			return info
		}
	}
	return nil
}

// TestEveryResponseCarriesTheIdentity: every method of MetadataService
// answers a message with the string fields cluster_id and history_id,
// which the stamp sets on unary answers and on every streamed message,
// and a bad history_id in a watch or history request is InvalidArgument.
func TestEveryResponseCarriesTheIdentity(t *testing.T) {
	methods := pb.File_metalog_proto.Services().ByName("MetadataService").Methods()
	for i := range methods.Len() {
		out := methods.Get(i).Output()
		for _, name := range []protoreflect.Name{clusterIDField, historyIDField} {
			if fd := out.Fields().ByName(name); fd == nil || fd.Kind() != protoreflect.StringKind || fd.Cardinality() == protoreflect.Repeated {
				t.Errorf("%s answers %s, which has no string field %s", methods.Get(i).Name(), out.Name(), name)
			}
		}
	}
	f := &identifiedMember{fakeMember: fakeMember{err: nil}, id: member.Identity{ClusterID: 0xc1, HistoryID: 0xa1}}
	s := newStamp(f)
	for _, m := range []any{&pb.ExecuteResponse{}, &pb.WatchResponse{}, &pb.ListMembersResponse{ClusterId: "c1"}, &pb.RemoveMemberResponse{}} {
		s.set(m)
		r := m.(interface {
			GetClusterId() string
			GetHistoryId() string
		})
		if r.GetClusterId() != "c1" || r.GetHistoryId() != "a1" {
			t.Errorf("%T stamped: cluster %q history %q, want c1 and a1", m, r.GetClusterId(), r.GetHistoryId())
		}
	}
	legacy := newStamp(&identifiedMember{id: member.IdentityOf(0, metadata.HistoryName{Nonce: 5}, raftlog.NamingBegun)})
	resp := &pb.HistoryResponse{}
	legacy.set(resp)
	if resp.GetClusterId() != "" || resp.GetHistoryId() != member.FormatHistoryID(member.HistoryID(0, 5)) || resp.GetHistoryId() == "" {
		t.Errorf("a cluster without id: cluster %q history %q, want none and HistoryID(0, 5)", resp.GetClusterId(), resp.GetHistoryId())
	}
	// The history id is read for every response: "" until the cluster
	// names its history, its id from then on.
	later := &identifiedMember{id: member.IdentityOf(0xc1, metadata.HistoryName{}, raftlog.NamingBegun)}
	s = newStamp(later)
	resp = &pb.HistoryResponse{}
	s.set(resp)
	if resp.GetClusterId() != "c1" || resp.GetHistoryId() != "" {
		t.Errorf("before the history is named: cluster %q history %q, want c1 and none", resp.GetClusterId(), resp.GetHistoryId())
	}
	later.id = member.IdentityOf(0xc1, metadata.HistoryName{Cluster: 0xc1, Nonce: 7}, raftlog.NamingBegun)
	s.set(resp)
	if want := member.FormatHistoryID(member.HistoryID(0xc1, 7)); resp.GetClusterId() != "c1" || resp.GetHistoryId() != want {
		t.Errorf("once the history is named: cluster %q history %q, want c1 and %s", resp.GetClusterId(), resp.GetHistoryId(), want)
	}
	unknown := newStamp(nil)
	resp = &pb.HistoryResponse{}
	unknown.set(resp)
	if resp.GetHistoryId() != "" {
		t.Errorf("a backend without identity stamped history %q", resp.GetHistoryId())
	}

	w := httptest.NewRecorder()
	testHTTP(t, &fakeMember{}).ServeHTTP(w, httptest.NewRequest("GET", "/v1/history?history_id=xyz", nil))
	httpCase{method: "GET", target: "/v1/history?history_id=xyz", status: 400, code: codes.InvalidArgument, contains: []string{`history id "xyz"`}}.check(t, w.Result())
}

// identifiedMember is a fakeMember with an identity.
type identifiedMember struct {
	fakeMember
	id member.Identity
}

func (f *identifiedMember) Identity() member.Identity { return f.id }

// TestREADMEErrorTableListsEveryReason: the README's error table (in
// "Requests and errors") has a row for each reason a member's answer
// carries, with the code and the HTTP status the answer has, and the Go
// client's sentinel, so that the table cannot fall behind the code.
func TestREADMEErrorTableListsEveryReason(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "| ") && strings.Contains(line, "`") {
			rows = append(rows, line)
		}
	}
	type want struct {
		reason string
		code   codes.Code
		http   string
	}
	wants := []want{
		{reasonTooManyStreams, codes.ResourceExhausted, "| 429 |"},
		{reasonTooManyStreams, codes.Unavailable, "| 503 |"},
		{reasonTooManyRequests, codes.ResourceExhausted, ""},
	}
	for _, tc := range reasonCases() {
		http := "| " + strconv.Itoa(tc.http)
		if tc.reason == reasonPartiallyApplied {
			http = "" // the failed statement's code and its status
		}
		wants = append(wants, want{tc.reason, tc.code, http})
	}
	for _, w := range wants {
		found := false
		for _, row := range rows {
			if strings.Contains(row, "`"+w.reason+"`") && (w.reason == reasonPartiallyApplied || strings.Contains(row, "| "+w.code.String()+" |")) &&
				strings.Contains(row, w.http) && strings.Contains(row, "`Err") {
				found = true
			}
		}
		if !found {
			t.Errorf("README.md's error table has no row for reason %s with code %v, HTTP %q and its client sentinel", w.reason, w.code, w.http)
		}
	}
}

// TestStreamLimitReasonsOverHTTP: the two refusals of a stream limit keep
// their reason TOO_MANY_STREAMS through the gateway, with the HTTP status
// the README lists: 429 for the identity's limit, 503 for the member's.
func TestStreamLimitReasonsOverHTTP(t *testing.T) {
	perIdentity := newStreamLimits(10, 0).acquire("/metalog.v1.MetadataService/Watch", "token:app")
	total := newStreamLimits(0, 10).acquire("/metalog.v1.MetadataService/Watch", "token:app")
	for _, tc := range []struct {
		err  error
		code codes.Code
		http int
	}{{perIdentity, codes.ResourceExhausted, 429}, {total, codes.Unavailable, 503}} {
		if info := errorInfoOf(status.Convert(tc.err)); status.Code(tc.err) != tc.code || info == nil || info.GetReason() != reasonTooManyStreams {
			t.Errorf("%v: want %v with reason %s", tc.err, tc.code, reasonTooManyStreams)
		}
		w := httptest.NewRecorder()
		testHTTP(t, &fakeMember{err: tc.err}).ServeHTTP(w, httptest.NewRequest("POST", "/v1/execute", strings.NewReader(`{"statements":"x"}`)))
		if w.Code != tc.http || !strings.Contains(w.Body.String(), `"reason":"TOO_MANY_STREAMS"`) {
			t.Errorf("%v over HTTP: %d %s, want %d with reason TOO_MANY_STREAMS", tc.code, w.Code, w.Body, tc.http)
		}
	}
}
