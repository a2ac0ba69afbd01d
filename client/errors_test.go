package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/internal/testkit"
)

// TestEverySentinelMatchesItsReason: a member's answer with a metalog
// ErrorInfo comes back from calls, changes and watches as a *ReasonError
// that matches (errors.Is) the sentinel of its reason and no other, keeps
// the answer's code and message, and carries its metadata; an answer
// without ErrorInfo is returned as it came.
func TestEverySentinelMatchesItsReason(t *testing.T) {
	sentinels := map[string]error{
		"GUARDRAIL": ErrGuardrail, "IF_EPOCH_CONFLICT": ErrIfEpochConflict, "PLAN_REFUSED": ErrPlanRefused,
		"HISTORY_PRUNED": ErrHistoryPruned, "HISTORY_CHANGED": ErrHistoryChanged, "EPOCH_AHEAD": ErrEpochAhead,
		"SCOPE": ErrScope, "RATE_LIMITED": ErrRateLimited, "NOSPACE": ErrNoSpace, "TOO_MANY_STREAMS": ErrTooManyStreams,
		"TOO_MANY_STATEMENTS": ErrTooManyStatements, "TOO_MANY_REQUESTS": ErrTooManyRequests,
		"PARTIALLY_APPLIED": ErrPartiallyApplied,
	}
	codeOf := map[string]codes.Code{
		"GUARDRAIL": codes.FailedPrecondition, "IF_EPOCH_CONFLICT": codes.FailedPrecondition, "PLAN_REFUSED": codes.FailedPrecondition,
		"HISTORY_PRUNED": codes.OutOfRange, "HISTORY_CHANGED": codes.FailedPrecondition, "EPOCH_AHEAD": codes.OutOfRange,
		"SCOPE": codes.PermissionDenied, "RATE_LIMITED": codes.ResourceExhausted, "NOSPACE": codes.ResourceExhausted,
		"TOO_MANY_STREAMS": codes.ResourceExhausted, "TOO_MANY_STATEMENTS": codes.ResourceExhausted,
		"TOO_MANY_REQUESTS": codes.ResourceExhausted, "PARTIALLY_APPLIED": codes.AlreadyExists,
	}
	for reason, sentinel := range sentinels {
		answer := withReason(codeOf[reason], "fake says "+reason, reason, map[string]string{"k": reason})
		c := newTestClient(t, Config{Endpoints: []string{testkit.Serve(t, &testkit.Fake{Err: answer})}})
		ctx := testCtx(t)
		_, getErr := c.GetSchema(ctx, &pb.GetSchemaRequest{})
		_, execErr := c.Execute(ctx, &pb.ExecuteRequest{Statements: "x"})
		var watchErr error
		if w, err := c.Watch(ctx, &pb.WatchRequest{}); err != nil {
			watchErr = err
		} else {
			_, watchErr = w.Recv()
		}
		for what, err := range map[string]error{"GetSchema": getErr, "Execute": execErr, "Watch": watchErr} {
			var re *ReasonError
			if !errors.Is(err, sentinel) || !errors.As(err, &re) || re.Reason != reason || re.Metadata["k"] != reason {
				t.Errorf("%s answered %s: %v, want a *ReasonError matching its sentinel", what, reason, err)
				continue
			}
			if st := status.Convert(err); st.Code() != codeOf[reason] || st.Message() != "fake says "+reason || err.Error() != answer.Error() {
				t.Errorf("%s answered %s: code %v message %q (%q), want the answer's", what, reason, st.Code(), st.Message(), err)
			}
			for other, s := range sentinels {
				if other != reason && errors.Is(err, s) {
					t.Errorf("%s answered %s: matches the sentinel of %s too", what, reason, other)
				}
			}
			if errors.Is(err, ErrOutcomeUnknown) {
				t.Errorf("%s answered %s: matches ErrOutcomeUnknown", what, reason)
			}
		}
	}
	plain := status.Error(codes.NotFound, "no such table")
	c := newTestClient(t, Config{Endpoints: []string{testkit.Serve(t, &testkit.Fake{Err: plain})}})
	_, err := c.GetSchema(testCtx(t), &pb.GetSchemaRequest{})
	var re *ReasonError
	if errors.As(err, &re) || status.Code(err) != codes.NotFound {
		t.Errorf("an answer without ErrorInfo: %v (%T), want it as it came", err, err)
	}
}

// historyFake is a member of history id history serving a feed of one
// event per epoch up to last. A watch is sent its messages after
// from_epoch, each carrying the history id, then ended Unavailable when
// endAfter messages went out (0: held open). With check set it refuses a
// request naming another history id as a member does. It records the
// history_id of every request.
type historyFake struct {
	pb.UnimplementedMetadataServiceServer
	history  string
	last     uint64
	endAfter int
	check    bool

	mu    sync.Mutex // guards asked
	asked []string
}

func (f *historyFake) Watch(req *pb.WatchRequest, stream grpc.ServerStreamingServer[pb.WatchResponse]) error {
	f.mu.Lock()
	f.asked = append(f.asked, req.GetHistoryId())
	f.mu.Unlock()
	if f.check && req.GetHistoryId() != "" && req.GetHistoryId() != f.history {
		return withReason(codes.FailedPrecondition, "fake says HISTORY_CHANGED", "HISTORY_CHANGED", map[string]string{"history_id": f.history, "requested_history_id": req.GetHistoryId()})
	}
	sent := 0
	for e := req.GetFromEpoch() + 1; e <= f.last; e++ {
		if f.endAfter > 0 && sent == f.endAfter {
			return status.Error(codes.Unavailable, "fake goes away")
		}
		msg := &pb.WatchResponse{Type: string(WatchEvents), Epoch: e, HistoryId: f.history, ClusterId: "c" + f.history,
			Events: []*pb.Event{{Epoch: e, Kind: "CREATE TABLE", Keyspace: "ks", Table: fmt.Sprintf("t%d", e)}}}
		if err := stream.Send(msg); err != nil {
			return err
		}
		sent++
	}
	<-stream.Context().Done()
	return status.FromContextError(stream.Context().Err()).Err()
}

func (f *historyFake) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.asked...)
}

// TestWatchResumesWithItsHistoryID: a watch names, on resume, the history
// id of the messages it received; a member of another history ends it
// with ErrHistoryChanged, whether that member refuses the request
// (HISTORY_CHANGED) or answers for its own history; a member of the same
// history goes on from the last epoch.
func TestWatchResumesWithItsHistoryID(t *testing.T) {
	for _, tc := range []struct {
		name  string
		next  *historyFake
		want  error
		epoch uint64 // the next epoch Recv returns when want is nil
	}{
		{"a restored cluster refuses it", &historyFake{history: "b2", last: 9, check: true}, ErrHistoryChanged, 0},
		{"a member that does not check answers another history", &historyFake{history: "b2", last: 9}, ErrHistoryChanged, 0},
		{"a member of the same history goes on", &historyFake{history: "a1", last: 9, check: true}, nil, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := &historyFake{history: "a1", last: 9, endAfter: 2, check: true}
			c := newTestClient(t, Config{Endpoints: []string{testkit.Serve(t, first), testkit.Serve(t, tc.next)}})
			w, err := c.Watch(testCtx(t), &pb.WatchRequest{FromEpoch: proto.Uint64(0)})
			if err != nil {
				t.Fatal(err)
			}
			for e := uint64(1); e <= 2; e++ {
				if m, err := w.Recv(); err != nil || m.GetEpoch() != e || m.GetHistoryId() != "a1" {
					t.Fatalf("message %d: %v, %v", e, m, err)
				}
			}
			m, err := w.Recv()
			if tc.want != nil {
				var re *ReasonError
				if !errors.Is(err, tc.want) || !errors.As(err, &re) || status.Code(err) != codes.FailedPrecondition ||
					re.Metadata["history_id"] != "b2" || re.Metadata["requested_history_id"] != "a1" {
					t.Fatalf("after the resume: %v, %v; want FailedPrecondition matching ErrHistoryChanged naming b2 and a1", m, err)
				}
				if _, again := w.Recv(); again != err {
					t.Errorf("Recv after the end: %v, want %v again", again, err)
				}
			} else if err != nil || m.GetEpoch() != tc.epoch {
				t.Fatalf("after the resume: %v, %v; want epoch %d", m, err, tc.epoch)
			}
			if got := tc.next.requests(); len(got) != 1 || got[0] != "a1" {
				t.Errorf("the resume on the second member named history ids %q, want [a1]", got)
			}
			if got := first.requests(); len(got) != 1 || got[0] != "" {
				t.Errorf("the first request named history ids %q, want none", got)
			}
		})
	}
}

// TestNotProposedAndOutcomeUnknownSentinels: the two reasons the Client
// acts on itself have their sentinels too: a call that every member
// answered NOT_PROPOSED until its deadline matches ErrNotProposed (and is
// Unavailable); an OUTCOME_UNKNOWN answer matches ErrOutcomeUnknown and
// no reason sentinel.
func TestNotProposedAndOutcomeUnknownSentinels(t *testing.T) {
	notProposed := withReason(codes.Unavailable, "fake says NOT_PROPOSED", reasonNotProposed, nil)
	c := newTestClient(t, Config{Endpoints: []string{testkit.Serve(t, &testkit.Fake{Err: notProposed})}})
	for what, call := range map[string]func(context.Context) error{
		"GetSchema": func(ctx context.Context) error { _, err := c.GetSchema(ctx, &pb.GetSchemaRequest{}); return err },
		"Execute": func(ctx context.Context) error {
			_, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "x"})
			return err
		},
	} {
		err := call(shortCtx(t, 500*time.Millisecond)) // attempts at about 0, 100 and 300 ms, the next at 700
		if !errors.Is(err, ErrNotProposed) || status.Code(err) != codes.Unavailable || errors.Is(err, ErrOutcomeUnknown) {
			t.Errorf("%s answered NOT_PROPOSED until its deadline: %v, want Unavailable matching ErrNotProposed", what, err)
		}
	}
	unknown := withReason(codes.DeadlineExceeded, "fake says OUTCOME_UNKNOWN", reasonOutcomeUnknown, map[string]string{"request_id": "r1"})
	c = newTestClient(t, Config{Endpoints: []string{testkit.Serve(t, &testkit.Fake{Err: unknown})}})
	_, err := c.Execute(shortCtx(t, time.Second), &pb.ExecuteRequest{Statements: "x", RequestId: "r1"})
	if !errors.Is(err, ErrOutcomeUnknown) || status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("Execute answered OUTCOME_UNKNOWN: %v, want DeadlineExceeded matching ErrOutcomeUnknown", err)
	}
	for _, s := range []error{ErrGuardrail, ErrIfEpochConflict, ErrHistoryChanged, ErrNotProposed} {
		if errors.Is(err, s) {
			t.Errorf("Execute answered OUTCOME_UNKNOWN: matches %v", s)
		}
	}
}
