package integration

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

// identity is the cluster id and history id a member answers with.
type identity struct{ cluster, history string }

// identified is a response with the identity fields.
type identified interface {
	GetClusterId() string
	GetHistoryId() string
}

// identityOf returns the identity s answers with, after checking that
// every kind of response carries the same one: changes, reads, the
// history, a watch message, a backup's first message, a request's
// outcome, the member list, the agreement check, a plan, the guardrails.
func identityOf(t *testing.T, s *server) identity {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rpc := s.client()
	var answers []identified
	note := func(what string, resp identified, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		answers = append(answers, resp)
	}
	r1, err := rpc.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE KEYSPACE IF NOT EXISTS idcheck WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", DryRun: true})
	note("Execute", r1, err)
	r2, err := rpc.GetSchema(ctx, &pb.GetSchemaRequest{})
	note("GetSchema", r2, err)
	r3, err := rpc.History(ctx, &pb.HistoryRequest{})
	note("History", r3, err)
	r4, err := rpc.ListMembers(ctx, &pb.ListMembersRequest{})
	note("ListMembers", r4, err)
	r5, err := rpc.CheckCluster(ctx, &pb.CheckClusterRequest{})
	note("CheckCluster", r5, err)
	r6, err := rpc.GetRequestOutcome(ctx, &pb.GetRequestOutcomeRequest{RequestId: "never-sent"})
	note("GetRequestOutcome", r6, err)
	r7, err := rpc.GetGuardrails(ctx, &pb.GetGuardrailsRequest{})
	note("GetGuardrails", r7, err)
	r8, err := rpc.Plan(ctx, &pb.PlanRequest{Desired: "CREATE KEYSPACE idcheck WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"})
	note("Plan", r8, err)
	w, err := rpc.Watch(ctx, &pb.WatchRequest{})
	if err == nil {
		var m *pb.WatchResponse
		m, err = w.Recv()
		note("Watch", m, err)
	}
	b, err := rpc.Backup(ctx, &pb.BackupRequest{})
	if err == nil {
		var m *pb.BackupResponse
		m, err = b.Recv()
		note("Backup", m, err)
	}
	ob, err := rpc.SaveSnapshot(ctx, &pb.SaveSnapshotRequest{})
	if err == nil {
		var m *pb.SaveSnapshotResponse
		m, err = ob.Recv()
		note("SaveSnapshot", m, err)
	}
	id := identity{r4.GetClusterId(), r4.GetHistoryId()}
	if id.cluster == "" || id.history == "" || id.cluster == id.history {
		t.Fatalf("ListMembers answers cluster %q history %q: want both, different", id.cluster, id.history)
	}
	for _, a := range answers {
		if got := (identity{a.GetClusterId(), a.GetHistoryId()}); got != id {
			t.Errorf("%T carries %+v, ListMembers %+v", a, got, id)
		}
	}
	return id
}

// checkHistoryChanged checks that err is the refusal of a request naming
// history id asked by a member of history id has: FailedPrecondition with
// ErrorInfo HISTORY_CHANGED, both ids in its metadata and its message.
func checkHistoryChanged(t *testing.T, what string, err error, asked, has identity) {
	t.Helper()
	st := status.Convert(err)
	var info *errdetails.ErrorInfo
	for _, d := range st.Details() {
		if i, ok := d.(*errdetails.ErrorInfo); ok && i.GetDomain() == "metalog" {
			info = i
		}
	}
	if st.Code() != codes.FailedPrecondition || info == nil || info.GetReason() != "HISTORY_CHANGED" {
		t.Fatalf("%s naming history %s: %v, want FailedPrecondition HISTORY_CHANGED", what, asked.history, err)
	}
	md := info.GetMetadata()
	if md["history_id"] != has.history || md["requested_history_id"] != asked.history || md["cluster_id"] != has.cluster {
		t.Errorf("%s: metadata %v, want history %s, requested %s, cluster %s", what, md, has.history, asked.history, has.cluster)
	}
	if !strings.Contains(st.Message(), asked.history) || !strings.Contains(st.Message(), has.history) {
		t.Errorf("%s: %q does not name both history ids", what, st.Message())
	}
}

// execAll runs each statement as a request of its own on rpc.
func execAll(t *testing.T, rpc pb.MetadataServiceClient, stmts ...string) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var epoch uint64
	for _, st := range stmts {
		resp, err := rpc.Execute(ctx, &pb.ExecuteRequest{Statements: st})
		if err != nil {
			t.Fatalf("%s: %v", st, err)
		}
		epoch = resp.GetEpoch()
	}
	return epoch
}

const ks1 = "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"

// TestRestoreGivesANewHistory: a consumer follows a cluster with
// client.Follow up to epoch 6; the cluster is replaced, on the same
// address, by one restored from a backup taken at epoch 3, whose epochs 4,
// 5, 6 will be other changes. Follow resumes naming the history id it saw,
// and ends with ErrHistoryChanged instead of waiting for epoch 7 (or
// claiming progress the restored cluster never made). Every response of
// the restored cluster carries a new cluster id and history id, which a
// restart keeps; a history or watch request naming the old history id is
// refused naming both, over gRPC and HTTP; one naming none is told the
// restored cluster's epoch, never the epoch it asked from. A consumer that resyncs (reads
// the schema, follows from its epoch with the new history id) receives the
// restored cluster's new epochs.
func TestRestoreGivesANewHistory(t *testing.T) {
	c := newCluster(t, 1)
	old := c.servers[0]
	execAll(t, old.client(), ks1, "CREATE TABLE ks.t1 (id int PRIMARY KEY)", "CREATE TABLE ks.t2 (id int PRIMARY KEY)")
	path := filepath.Join(t.TempDir(), "backup.snap")
	if out, stderr, rc := old.cli("backup", "save", path); rc != 0 || !strings.Contains(out, "epoch 3,") {
		t.Fatalf("backup save: rc=%d %s %s", rc, out, stderr)
	}
	if epoch := execAll(t, old.client(), "CREATE TABLE ks.t3 (id int PRIMARY KEY)", "CREATE TABLE ks.t4 (id int PRIMARY KEY)",
		"CREATE TABLE ks.t5 (id int PRIMARY KEY)"); epoch != 6 {
		t.Fatalf("the old cluster is at epoch %d, want 6", epoch)
	}
	before := identityOf(t, old)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := client.New(client.Config{Endpoints: []string{old.grpcAddr}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	results := cl.Follow(ctx, &pb.WatchRequest{FromEpoch: proto.Uint64(0)})
	for seen := uint64(0); seen < 6; {
		r := <-results
		if r.Err != nil {
			t.Fatalf("follow: %v", r.Err)
		}
		if got := (identity{r.Response.GetClusterId(), r.Response.GetHistoryId()}); got != before {
			t.Fatalf("a watch message carries %+v, the cluster answers %+v", got, before)
		}
		seen = r.Response.GetEpoch()
	}

	// The old cluster goes; a restored one takes its client address.
	old.stop()
	r := newServer(t)
	r.grpcAddr, r.httpAddr = old.grpcAddr, old.httpAddr
	initial := "n1=" + r.peers
	if out, stderr, rc := runBinary(t, "backup", "restore", path, "--data-dir", r.dir, "--name", "n1", "--initial-cluster", initial); rc != 0 {
		t.Fatalf("backup restore: rc=%d %s %s", rc, out, stderr)
	}
	r.start("--name", "n1", "--initial-cluster", initial, "--watch-progress-interval", "100ms")
	after := identityOf(t, r)
	if after.cluster == before.cluster || after.history == before.history {
		t.Fatalf("restored cluster %+v, the backup's %+v: want a new cluster id and history id", after, before)
	}

	select {
	case res := <-results:
		var re *client.ReasonError
		if !errors.Is(res.Err, client.ErrHistoryChanged) || !errors.As(res.Err, &re) {
			t.Fatalf("follow after the restore: %+v, want ErrHistoryChanged", res)
		}
		checkHistoryChanged(t, "follow's resume", res.Err, before, after)
	case <-ctx.Done():
		t.Fatal("follow did not end after the restore")
	}

	_, err = r.client().History(ctx, &pb.HistoryRequest{FromEpoch: proto.Uint64(3), HistoryId: before.history})
	checkHistoryChanged(t, "history", err, before, after)
	w, err := r.client().Watch(ctx, &pb.WatchRequest{FromEpoch: proto.Uint64(6), HistoryId: before.history})
	if err == nil {
		_, err = w.Recv()
	}
	checkHistoryChanged(t, "watch", err, before, after)
	resp, err := http.Get("http://" + r.httpAddr + "/v1/history?from_epoch=3&history_id=" + before.history)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"reason":"HISTORY_CHANGED"`) {
		t.Errorf("GET /v1/history naming the old history: %d %s, want 400 HISTORY_CHANGED", resp.StatusCode, body)
	}

	// A consumer that names no history id and resumes from epoch 6 is
	// not told at once that the restored cluster has it: the watch waits,
	// saying where the member is (epoch 3) and which history it counts in.
	blind, err := r.client().Watch(ctx, &pb.WatchRequest{FromEpoch: proto.Uint64(6)})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := blind.Recv(); err != nil || m.GetType() != "progress" || m.GetEpoch() != 3 || m.GetHistoryId() != after.history {
		t.Fatalf("a watch from epoch 6 naming no history, on the cluster restored at 3: %v, %v; want progress at 3 of history %s", m, err, after.history)
	}

	// The resync: the schema at the restored cluster's epoch, then its
	// changes from there, under its history id.
	schema, err := cl.GetSchema(ctx, &pb.GetSchemaRequest{})
	if err != nil || schema.GetEpoch() != 3 || schema.GetHistoryId() != after.history {
		t.Fatalf("schema after the restore: epoch %d history %s, %v; want epoch 3 of %s", schema.GetEpoch(), schema.GetHistoryId(), err, after.history)
	}
	results = cl.Follow(ctx, &pb.WatchRequest{FromEpoch: proto.Uint64(schema.GetEpoch()), HistoryId: schema.GetHistoryId()})
	execAll(t, r.client(), "CREATE TABLE ks.restored (id int PRIMARY KEY)")
	for res := range results {
		if res.Err != nil {
			t.Fatalf("follow after the resync: %v", res.Err)
		}
		if evs := res.Response.GetEvents(); len(evs) > 0 {
			if evs[0].GetEpoch() != 4 || evs[0].GetTable() != "restored" || res.Response.GetHistoryId() != after.history {
				t.Fatalf("first change after the resync: %v, want epoch 4 CREATE TABLE ks.restored", res.Response)
			}
			break
		}
	}

	r.stop()
	r.start()
	if again := identityOf(t, r); again != after {
		t.Errorf("after a restart the member answers %+v, before it %+v", again, after)
	}
}

// TestForcedClusterGetsANewHistory: --force-new-cluster gives the
// survivor a new history id beside its new cluster id; a watch or history
// naming the old one is refused naming both; a member that joins the
// forced cluster answers with the forced cluster's identity.
func TestForcedClusterGetsANewHistory(t *testing.T) {
	c := newCluster(t, 2)
	execAll(t, c.servers[0].client(), ks1, "CREATE TABLE ks.t1 (id int PRIMARY KEY)")
	c.waitSameDigest()
	before := identityOf(t, c.servers[0])
	if other := identityOf(t, c.servers[1]); other != before {
		t.Fatalf("n1 answers %+v, n2 %+v: want the same identity", before, other)
	}
	survivor := c.servers[0]
	for _, s := range c.servers {
		s.kill()
	}
	survivor.start("--name", "n1", "--force-new-cluster")
	after := identityOf(t, survivor)
	if after.cluster == before.cluster || after.history == before.history {
		t.Fatalf("forced cluster %+v, before %+v: want a new cluster id and history id", after, before)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := survivor.client().History(ctx, &pb.HistoryRequest{FromEpoch: proto.Uint64(0), HistoryId: before.history})
	checkHistoryChanged(t, "history", err, before, after)
	w, err := survivor.client().Watch(ctx, &pb.WatchRequest{FromEpoch: proto.Uint64(2), HistoryId: before.history})
	if err == nil {
		_, err = w.Recv()
	}
	checkHistoryChanged(t, "watch", err, before, after)
	if _, err := survivor.client().History(ctx, &pb.HistoryRequest{FromEpoch: proto.Uint64(0), HistoryId: after.history}); err != nil {
		t.Errorf("history naming the forced cluster's history: %v", err)
	}

	joiner := newServer(t)
	if out, stderr, rc := survivor.cli("cluster", "add", "--name", "n3", "--peer-addr", joiner.peers); rc != 0 {
		t.Fatalf("cluster add: rc=%d %s %s", rc, out, stderr)
	}
	joiner.start("--name", "n3", "--join", survivor.grpcAddr)
	r := &cluster{t: t, servers: []*server{survivor, joiner}, names: []string{"n1", "n3"}}
	r.waitVoter("n3")
	if got := identityOf(t, joiner); got != after {
		t.Errorf("a member that joined the forced cluster answers %+v, want %+v", got, after)
	}
}

// TestWatchAheadWaitsAndReadsAnswerInTime: a watch from an epoch the
// member has not reached waits for it: its progress messages never carry
// an epoch the member has not reached, and the change after that epoch is
// sent when made. A min_epoch read past the member's epoch with a short
// deadline of the caller's comes back DeadlineExceeded, naming min_epoch,
// through the client library too; an at_epoch read past the cluster's
// epoch is refused at once with OutOfRange EPOCH_AHEAD.
func TestWatchAheadWaitsAndReadsAnswerInTime(t *testing.T) {
	c := newCluster(t, 1, "--watch-progress-interval", "100ms")
	s := c.servers[0]
	execAll(t, s.client(), ks1) // epoch 1
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id := identityOf(t, s)
	w, err := s.client().Watch(ctx, &pb.WatchRequest{FromEpoch: proto.Uint64(3), HistoryId: id.history})
	if err != nil {
		t.Fatal(err)
	}
	epochNow := func() uint64 {
		resp, err := s.client().GetSchema(ctx, &pb.GetSchemaRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetEpoch()
	}
	recv := func() *pb.WatchResponse {
		m, err := w.Recv()
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		// The member's epoch only grows: read after the message, it is
		// at least what the member had when it sent it.
		if now := epochNow(); m.GetEpoch() > now {
			t.Fatalf("watch sent %s at epoch %d while the member is at %d", m.GetType(), m.GetEpoch(), now)
		}
		return m
	}
	for range 2 {
		if m := recv(); m.GetType() != "progress" || m.GetEpoch() != 1 {
			t.Fatalf("a watch from epoch 3 of a member at 1: %v, want progress at 1", m)
		}
	}
	execAll(t, s.client(), "CREATE TABLE ks.a (id int PRIMARY KEY)", "CREATE TABLE ks.b (id int PRIMARY KEY)", "CREATE TABLE ks.c (id int PRIMARY KEY)")
	for {
		m := recv()
		if m.GetType() == "progress" {
			continue
		}
		if evs := m.GetEvents(); m.GetType() != "events" || len(evs) != 1 || evs[0].GetEpoch() != 4 || evs[0].GetTable() != "c" {
			t.Fatalf("first changes of a watch from epoch 3: %v, want epoch 4 (CREATE TABLE ks.c) alone", m)
		}
		break
	}

	short, cancelShort := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancelShort()
	_, err = s.client().GetSchema(short, &pb.GetSchemaRequest{MinEpoch: 99})
	if status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("min_epoch 99 with a 200ms deadline: %v, want DeadlineExceeded", err)
	}
	cl, err := client.New(client.Config{Endpoints: []string{s.grpcAddr}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	short2, cancelShort2 := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancelShort2()
	if _, err := cl.GetSchema(short2, &pb.GetSchemaRequest{MinEpoch: 99}); status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("min_epoch 99 with a 200ms deadline through the client: %v, want DeadlineExceeded", err)
	}
	_, err = cl.GetSchema(ctx, &pb.GetSchemaRequest{AtEpoch: proto.Uint64(999999)})
	if !errors.Is(err, client.ErrEpochAhead) || status.Code(err) != codes.OutOfRange ||
		!strings.Contains(err.Error(), "at_epoch 999999: the cluster is at epoch 4") {
		t.Errorf("at_epoch 999999 of a cluster at 4: %v, want OutOfRange EPOCH_AHEAD naming both epochs", err)
	}
	resp, err := http.Get("http://" + s.httpAddr + "/v1/schema?at_epoch=999999")
	if err != nil {
		t.Fatal(err)
	}
	var form struct {
		Code    int               `json:"code"`
		Details []json.RawMessage `json:"details"`
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &form) != nil || codes.Code(form.Code) != codes.OutOfRange ||
		!strings.Contains(string(body), `"reason":"EPOCH_AHEAD"`) {
		t.Errorf("GET /v1/schema?at_epoch=999999: %d %s, want 400 OutOfRange EPOCH_AHEAD", resp.StatusCode, body)
	}

	// A watch from an epoch ahead ends with the caller's deadline.
	short3, cancelShort3 := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancelShort3()
	ahead, err := s.client().Watch(short3, &pb.WatchRequest{FromEpoch: proto.Uint64(99)}, grpc.WaitForReady(true))
	for err == nil {
		var m *pb.WatchResponse
		if m, err = ahead.Recv(); err == nil && m.GetEpoch() > 4 {
			t.Fatalf("a watch from epoch 99 sent %v; the member is at 4", m)
		}
	}
	if status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("a watch from epoch 99 past its deadline: %v, want DeadlineExceeded", err)
	}
}
