package client

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/internal/testkit"
)

// answering is a MetadataService whose Execute answers with answer (nil:
// success at epoch 7) and records the request ids it was sent.
type answering struct {
	pb.UnimplementedMetadataServiceServer
	answer func() error
	mu     sync.Mutex // guards ids
	ids    []string
}

func (a *answering) Execute(_ context.Context, req *pb.ExecuteRequest) (*pb.ExecuteResponse, error) {
	a.mu.Lock()
	a.ids = append(a.ids, req.GetRequestId())
	a.mu.Unlock()
	if err := a.answer(); err != nil {
		return nil, err
	}
	return &pb.ExecuteResponse{Epoch: 7}, nil
}

func (a *answering) requestIDs() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.ids...)
}

// withReason is a member's answer of code with a metalog ErrorInfo.
func withReason(code codes.Code, msg, reason string, md map[string]string) error {
	st, err := status.New(code, msg).WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: errorDomain, Metadata: md})
	if err != nil {
		panic(err)
	}
	return st.Err()
}

// unknownAnswer is a member's OUTCOME_UNKNOWN answer for request id.
func unknownAnswer(id string) error {
	return withReason(codes.DeadlineExceeded, "request "+id+": outcome unknown: it was proposed, but had not applied when the request deadline passed (no quorum?)",
		reasonOutcomeUnknown, map[string]string{"outcome": "unknown", "request_id": id, "applied_index": "41"})
}

// shortCtx is a context that ends after d, or with the test.
func shortCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestOutcomeUnknownAnswerNotSettled: a member answers OUTCOME_UNKNOWN and
// the other endpoint cannot be reached: the call's error is the outcome
// unknown, with the request id and index of the answer, code
// DeadlineExceeded, not Unavailable.
func TestOutcomeUnknownAnswerNotSettled(t *testing.T) {
	unknown := &answering{answer: func() error { return unknownAnswer("r1") }}
	addr := testkit.Serve(t, unknown)
	c := newTestClient(t, Config{Endpoints: []string{addr, deadAddr(t)}, ConnectTimeout: 200 * time.Millisecond})
	_, err := c.Execute(shortCtx(t, time.Second), &pb.ExecuteRequest{Statements: "x", RequestId: "r1"})
	var oe *OutcomeUnknownError
	if !errors.As(err, &oe) || !errors.Is(err, ErrOutcomeUnknown) || status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("err = %v (%s), want the outcome unknown", err, status.Code(err))
	}
	if oe.RequestID != "r1" || oe.AppliedIndex != 41 || oe.Endpoint != addr || !strings.Contains(err.Error(), "request r1: outcome unknown") {
		t.Errorf("outcome unknown %+v: %v", oe, err)
	}
	if ids := unknown.requestIDs(); len(ids) < 2 {
		t.Errorf("the member was asked %d times, want retries under the id until the deadline", len(ids))
	}
}

// TestOutcomeUnknownSettledByAnotherMember: the first member answers
// OUTCOME_UNKNOWN, the second answers: its answer is the call's, and both
// got the same request id.
func TestOutcomeUnknownSettledByAnotherMember(t *testing.T) {
	unknown := &answering{answer: func() error { return unknownAnswer("made-by-client") }}
	ok := &answering{answer: func() error { return nil }}
	c := newTestClient(t, Config{Endpoints: []string{testkit.Serve(t, unknown), testkit.Serve(t, ok)}})
	resp, err := c.Execute(testCtx(t), &pb.ExecuteRequest{Statements: "x"})
	if err != nil || resp.GetEpoch() != 7 {
		t.Fatalf("Execute: %v, %v; want the second member's answer", resp, err)
	}
	a, b := unknown.requestIDs(), ok.requestIDs()
	if len(a) != 1 || len(b) != 1 || a[0] != b[0] || a[0] == "" {
		t.Errorf("request ids %v then %v, want one id for both", a, b)
	}
}

// TestNotProposedStaysUnavailable: members that answer Unavailable with
// NOT_PROPOSED proposed nothing: the call ends Unavailable at its
// deadline, not outcome unknown.
func TestNotProposedStaysUnavailable(t *testing.T) {
	none := &answering{answer: func() error {
		return withReason(codes.Unavailable, "raftlog: no leader: context deadline exceeded", reasonNotProposed, nil)
	}}
	c := newTestClient(t, Config{Endpoints: []string{testkit.Serve(t, none)}})
	_, err := c.Execute(shortCtx(t, 500*time.Millisecond), &pb.ExecuteRequest{Statements: "x"})
	if status.Code(err) != codes.Unavailable || errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("err = %v, want Unavailable", err)
	}
}

// TestRefusalAfterAnUnknownAttemptDoesNotSettle: after an OUTCOME_UNKNOWN
// answer, a member refusing the retry by a limit (it looked at nothing of
// the request) leaves the outcome unknown; the same refusal first is the
// call's answer.
func TestRefusalAfterAnUnknownAttemptDoesNotSettle(t *testing.T) {
	limited := &answering{answer: func() error { return status.Error(codes.ResourceExhausted, "rate limited") }}
	unknown := &answering{answer: func() error { return unknownAnswer("r2") }}
	limitedAddr := testkit.Serve(t, limited)
	c := newTestClient(t, Config{Endpoints: []string{testkit.Serve(t, unknown), limitedAddr}})
	if _, err := c.Execute(shortCtx(t, time.Second), &pb.ExecuteRequest{Statements: "x", RequestId: "r2"}); !errors.Is(err, ErrOutcomeUnknown) {
		t.Errorf("a refusal after an unknown attempt: %v, want the outcome unknown", err)
	}
	first := newTestClient(t, Config{Endpoints: []string{limitedAddr}})
	if _, err := first.Execute(testCtx(t), &pb.ExecuteRequest{Statements: "x", RequestId: "r3"}); status.Code(err) != codes.ResourceExhausted || errors.Is(err, ErrOutcomeUnknown) {
		t.Errorf("a refusal first: %v, want ResourceExhausted", err)
	}
}

// TestReadsKnowNoOutcome: a read whose member answers DeadlineExceeded
// gets that answer, as before: only changes have an outcome.
func TestReadsKnowNoOutcome(t *testing.T) {
	slow := startFake(t, &fake{code: codes.DeadlineExceeded})
	c := newTestClient(t, Config{Endpoints: []string{slow.addr}})
	if _, err := c.GetSchema(testCtx(t), &pb.GetSchemaRequest{}); status.Code(err) != codes.DeadlineExceeded || errors.Is(err, ErrOutcomeUnknown) {
		t.Errorf("GetSchema: %v, want the member's DeadlineExceeded", err)
	}
}
