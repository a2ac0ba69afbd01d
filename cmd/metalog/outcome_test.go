package main

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/internal/testkit"
)

// unknownMember answers every change with OUTCOME_UNKNOWN, as a member
// that proposed it and lost its quorum does, and GetRequestOutcome with
// outcome.
type unknownMember struct {
	pb.UnimplementedMetadataServiceServer
	outcome *pb.GetRequestOutcomeResponse
	asked   chan *pb.GetRequestOutcomeRequest
}

// unknown is the member's answer for a change under request id (none for
// a membership change).
func unknown(id string) error {
	md := map[string]string{"outcome": "unknown"}
	msg := "add member n4: outcome unknown: it was proposed, but had not applied when the request deadline passed (no quorum?)"
	if id != "" {
		md["request_id"], md["applied_index"] = id, "41"
		msg = "request " + id + ": outcome unknown: it was proposed, but had not applied when the request deadline passed (no quorum?); the change may still apply"
	}
	st, _ := status.New(codes.DeadlineExceeded, msg).WithDetails(&errdetails.ErrorInfo{Reason: "OUTCOME_UNKNOWN", Domain: "metalog", Metadata: md})
	return st.Err()
}

func (m *unknownMember) Execute(_ context.Context, req *pb.ExecuteRequest) (*pb.ExecuteResponse, error) {
	return nil, unknown(req.GetRequestId())
}

func (m *unknownMember) SetGuardrails(_ context.Context, req *pb.SetGuardrailsRequest) (*pb.SetGuardrailsResponse, error) {
	return nil, unknown(req.GetRequestId())
}

func (m *unknownMember) AddMember(context.Context, *pb.AddMemberRequest) (*pb.AddMemberResponse, error) {
	return nil, unknown("")
}

func (m *unknownMember) GetRequestOutcome(_ context.Context, req *pb.GetRequestOutcomeRequest) (*pb.GetRequestOutcomeResponse, error) {
	m.asked <- req
	return m.outcome, nil
}

func startUnknownMember(t *testing.T, m *unknownMember) string {
	t.Helper()
	return testkit.Serve(t, m)
}

// TestOutcomeUnknownExitsThree: exec, guardrails set and cluster add whose
// change may still apply exit 3 and say so, with the request id and the
// commands that learn and settle what happened; any other failure exits 1.
func TestOutcomeUnknownExitsThree(t *testing.T) {
	addr := startUnknownMember(t, &unknownMember{})
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"exec", "-e", "CREATE TABLE shop.t (id int PRIMARY KEY)", "--request-id", "r1"}, []string{
			"DeadlineExceeded: request r1: outcome unknown", "the change may still apply (exit code 3); request id r1",
			"learn what happened: metalog request r1 --after-index 41 --endpoints " + addr,
			"settle it: send the same request again with --request-id r1"}},
		{[]string{"guardrails", "set", "tables_warn_threshold=5", "--request-id", "g1"}, []string{
			"request g1: outcome unknown", "metalog request g1 --after-index 41", "--request-id g1"}},
		{[]string{"cluster", "add", "--name", "n4", "--peer-addr", "127.0.0.1:1"}, []string{
			"add member n4: outcome unknown", "learn what happened: metalog cluster status --endpoints " + addr}},
	} {
		_, err := runErr(t, append(tc.args, "--endpoints", addr, "--timeout", "300ms")...)
		if code := exitCode(err); code != 3 {
			t.Errorf("%s: exit code %d (%v), want 3", tc.args[0], code, err)
			continue
		}
		for _, want := range tc.want {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %q lacks %q", tc.args[0], err, want)
			}
		}
		if strings.Contains(err.Error(), "Unavailable") {
			t.Errorf("%s: %q says Unavailable", tc.args[0], err)
		}
	}
	_, err := runErr(t, "describe", "--endpoints", addr, "--timeout", "300ms")
	if code := exitCode(err); err == nil || code != 1 {
		t.Errorf("describe on a member without it: exit code %d (%v), want 1", code, err)
	}
}

// TestRequestCommand: metalog request asks for the id with --after-index
// and prints the member's words, then an applied request's statements,
// warnings and error; --json prints the answer as one object.
func TestRequestCommand(t *testing.T) {
	m := &unknownMember{asked: make(chan *pb.GetRequestOutcomeRequest, 2), outcome: &pb.GetRequestOutcomeResponse{
		RequestId: "r1", State: "applied", Epoch: 12, Index: 57, Message: `request "r1" applied in part at epoch 12 (log index 57): ...`,
		Results:  []*pb.StatementResult{{Kind: "CREATE TABLE", Keyspace: "shop", Table: "a", Applied: true, Epoch: 12}},
		Warnings: []string{"tables: 1001 > 1000"}, ErrorCode: "AlreadyExists", Error: "statement 2 of 2: CREATE TABLE shop.b: table already exists",
	}}
	addr := startUnknownMember(t, m)
	out, err := runErr(t, "request", "r1", "--after-index", "41", "--endpoints", addr)
	if err != nil {
		t.Fatal(err)
	}
	if req := <-m.asked; req.RequestId != "r1" || req.AfterIndex != 41 {
		t.Errorf("asked %v", req)
	}
	for _, want := range []string{`request "r1" applied in part at epoch 12 (log index 57)`, "CREATE TABLE  shop.a  applied  epoch 12",
		"warning: tables: 1001 > 1000", "error: AlreadyExists: statement 2 of 2", "epoch 12"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, err = runErr(t, "request", "r1", "--json", "--endpoints", addr)
	<-m.asked
	if err != nil || !strings.HasPrefix(out, "{") || !strings.Contains(out, `"state":"applied"`) || strings.Count(out, "\n") != 1 {
		t.Errorf("--json: %v\n%s", err, out)
	}
}
