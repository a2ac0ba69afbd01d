package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
	"github.com/metalog/metalog/schema"
)

// errorInfo returns err's metalog ErrorInfo, nil without one.
func errorInfo(err error) *errdetails.ErrorInfo {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == errorDomain {
			return info
		}
	}
	return nil
}

// unknownExecute is the error of an Execute whose outcome is unknown, as
// the member returns it for a request sent without an id.
func unknownExecute() error {
	return &member.OutcomeUnknownError{RequestID: "server-0123", AppliedIndex: 41,
		Err: fmt.Errorf("%w: %w", raftlog.ErrOutcomeUnknown, fmt.Errorf("%w: %w", raftlog.ErrNoLeader, context.DeadlineExceeded))}
}

// TestOutcomeUnknownAnswer: a write that may still apply is answered
// DeadlineExceeded with the ErrorInfo OUTCOME_UNKNOWN (the request id the
// member used, the index it applies after), logged as "execute outcome
// unknown" with that id and not counted as a refusal; an Unavailable
// answer says NOT_PROPOSED.
func TestOutcomeUnknownAnswer(t *testing.T) {
	var logs bytes.Buffer
	f := &fakeMember{err: unknownExecute()}
	svc, _ := newTestService(f)
	svc.logger = slog.New(slog.NewTextHandler(&logs, nil))
	_, err := svc.Execute(context.Background(), &pb.ExecuteRequest{Statements: "CREATE TABLE shop.t (id int PRIMARY KEY)"})
	info := errorInfo(err)
	if status.Code(err) != codes.DeadlineExceeded || info.GetReason() != "OUTCOME_UNKNOWN" ||
		info.GetMetadata()["request_id"] != "server-0123" || info.GetMetadata()["outcome"] != "unknown" || info.GetMetadata()["applied_index"] != "41" {
		t.Fatalf("Execute answered %v with %v, want DeadlineExceeded, OUTCOME_UNKNOWN, the request id and index", err, info)
	}
	for _, want := range []string{"may still apply", "metalog request server-0123"} {
		if !strings.Contains(status.Convert(err).Message(), want) {
			t.Errorf("message %q lacks %q", status.Convert(err).Message(), want)
		}
	}
	if line := logs.String(); !strings.Contains(line, `msg="execute outcome unknown"`) || !strings.Contains(line, "request_id=server-0123") || strings.Contains(line, "execute refused") {
		t.Errorf("log: %s", line)
	}
	if reason := refusalReason(err); reason != "" {
		t.Errorf("an unknown outcome counted as refused (%s)", reason)
	}

	f.err = fmt.Errorf("add member n4: %w", fmt.Errorf("raftlog: add learner: %w: %w", raftlog.ErrOutcomeUnknown, context.DeadlineExceeded))
	f.err = &member.OutcomeUnknownError{Change: "add member n4", Err: f.err}
	_, err = svc.AddMember(context.Background(), &pb.AddMemberRequest{Name: "n4", PeerAddr: "127.0.0.1:1"})
	if info := errorInfo(err); status.Code(err) != codes.DeadlineExceeded || info.GetReason() != "OUTCOME_UNKNOWN" || info.GetMetadata()["change"] != "add member n4" {
		t.Errorf("AddMember answered %v with %v", err, info)
	}

	f.err = fmt.Errorf("propose: %w: %w", member.ErrNoLeader, context.DeadlineExceeded)
	_, err = svc.Execute(context.Background(), &pb.ExecuteRequest{Statements: "CREATE TABLE shop.t (id int PRIMARY KEY)"})
	if info := errorInfo(err); status.Code(err) != codes.Unavailable || info.GetReason() != "NOT_PROPOSED" {
		t.Errorf("no leader: %v with %v, want Unavailable, NOT_PROPOSED", err, info)
	}
}

// TestOutcomeUnknownOverHTTP: over HTTP the same answer is 504 in the
// gateway's error form, with "outcome": "unknown" and the request id at
// the top level and in its ErrorInfo.
func TestOutcomeUnknownOverHTTP(t *testing.T) {
	h := testHTTP(t, &fakeMember{err: unknownExecute()})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/execute", strings.NewReader(`{"statements": "CREATE TABLE shop.t (id int PRIMARY KEY)"}`)))
	b, _ := io.ReadAll(rec.Body)
	var body struct {
		Code      int    `json:"code"`
		Message   string `json:"message"`
		Outcome   string `json:"outcome"`
		RequestID string `json:"request_id"`
		Details   []struct {
			Type     string            `json:"@type"`
			Reason   string            `json:"reason"`
			Metadata map[string]string `json:"metadata"`
		} `json:"details"`
	}
	if err := json.Unmarshal(b, &body); err != nil || rec.Code != 504 || body.Code != int(codes.DeadlineExceeded) || len(body.Details) != 1 {
		t.Fatalf("POST /v1/execute: %d %s (%v), want 504 in the gateway's form", rec.Code, b, err)
	}
	d := body.Details[0]
	if d.Reason != "OUTCOME_UNKNOWN" || d.Metadata["outcome"] != "unknown" || d.Metadata["request_id"] != "server-0123" || !strings.Contains(body.Message, "may still apply") ||
		body.Outcome != "unknown" || body.RequestID != "server-0123" {
		t.Errorf("504 body %s", b)
	}
}

// TestGetRequestOutcomeHandler: the handler passes the id, the index and
// the caller's view to the member, and turns an applied record into the
// answer (its results, warnings, error code and message); the path is
// GET /v1/requests/{request_id}.
func TestGetRequestOutcomeHandler(t *testing.T) {
	rec := metadata.RequestRecord{Index: 57, Outcome: metadata.Outcome{Epoch: 12, Results: []metadata.StatementResult{
		{Result: schema.Result{Kind: "CREATE TABLE", Keyspace: "shop", Table: "a", Applied: true}, Epoch: 12}}},
		Err: &metadata.StatementError{Position: 2, Total: 2, Applied: 1, Err: &schema.Error{Statement: "CREATE TABLE", Object: "shop.b", Reason: "table already exists", Code: schema.ErrAlreadyExists}}}
	f := &fakeMember{requestOutcome: member.RequestOutcome{ID: "r1", State: member.RequestApplied, Record: rec, Epoch: 14, Index: 60, Remembered: 3, Message: "applied in part"}}
	svc, _ := newTestService(f)
	resp, err := svc.GetRequestOutcome(context.Background(), &pb.GetRequestOutcomeRequest{RequestId: "r1", AfterIndex: 9})
	if err != nil {
		t.Fatal(err)
	}
	if q := f.outcomeQueries[0]; q.ID != "r1" || q.AfterIndex != 9 || q.Visible != nil {
		t.Errorf("member asked %+v", q)
	}
	if resp.State != "applied" || resp.Epoch != 12 || resp.Index != 57 || resp.AsOfEpoch != 14 || resp.AsOfIndex != 60 || len(resp.Results) != 1 ||
		resp.Results[0].Table != "a" || resp.ErrorCode != "AlreadyExists" || !strings.Contains(resp.Error, "statement 2 of 2") ||
		resp.MaxRemembered != metadata.MaxRememberedRequests || resp.Message != "applied in part" {
		t.Errorf("answer %v", resp)
	}

	// A member leaves the message of a request that failed to the API,
	// which names the error's code in it.
	f.requestOutcome.Message = ""
	resp, err = svc.GetRequestOutcome(context.Background(), &pb.GetRequestOutcomeRequest{RequestId: "r1"})
	if want := `request "r1" applied in part at epoch 12 (log index 57): the statements listed applied, then one failed: AlreadyExists: statement 2 of 2`; err != nil ||
		!strings.HasPrefix(resp.Message, want) {
		t.Errorf("message %q, %v; want it to start %q", resp.GetMessage(), err, want)
	}

	h := testHTTP(t, &fakeMember{requestOutcome: member.RequestOutcome{ID: "r 2", State: member.RequestNotApplied, Epoch: 14, Message: "not applied"}})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/v1/requests/r%202?after_index=5", nil))
	if b := w.Body.String(); w.Code != 200 || !strings.Contains(b, `"state":"not_applied"`) || !strings.Contains(b, `"as_of_epoch":"14"`) {
		t.Errorf("GET /v1/requests/r%%202: %d %s", w.Code, b)
	}
}

// TestRequestOutcomeOfAScopedReader: a reader scoped to shop is told of a
// request that created a table in shop, and gets the same answer for one
// in another keyspace as for an id never used; an unscoped reader is told
// of both, and that the unused id did not apply; a token without the
// reader role may not ask.
func TestRequestOutcomeOfAScopedReader(t *testing.T) {
	_, c := scopedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	admin := as(ctx, "admin-token")
	for id, ks := range map[string]string{"in-shop": "shop", "in-2": "other"} {
		if _, err := c.Execute(admin, &pb.ExecuteRequest{RequestId: id, Statements: "CREATE TABLE " + ks + ".r (id int PRIMARY KEY)"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ token, id, state string }{
		{"shop-token", "in-shop", "applied"},
		{"shop-token", "in-2", "not_visible"},
		{"shop-token", "never-sent", "not_visible"},
		{"all-token", "in-2", "applied"},
		{"all-token", "never-sent", "not_applied"},
	} {
		resp, err := c.GetRequestOutcome(as(ctx, tc.token), &pb.GetRequestOutcomeRequest{RequestId: tc.id})
		if err != nil || resp.State != tc.state {
			t.Errorf("%s asks about %s: %v, %v; want %s", tc.token, tc.id, resp, err, tc.state)
			continue
		}
		if tc.state == "not_visible" && (strings.Contains(resp.Message, "other") || len(resp.Results) != 0) {
			t.Errorf("%s asks about %s: the answer tells of another keyspace: %v", tc.token, tc.id, resp)
		}
	}
}
