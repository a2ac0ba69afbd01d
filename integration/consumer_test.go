package integration

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/internal/ddlgen"
)

// mirrorConsumer is a program a platform team would write on the client
// package alone: it keeps a structured copy of the schema (client.Mirror)
// from the change feed, follows from its own epoch after a restart of its
// own, and starts again from GetSchema when the cluster's history changes
// (a restore, a forced new cluster). Each Apply checks the event's before
// object against the copy, so a lost, repeated or reordered event is an
// error, never a silent difference.
type mirrorConsumer struct {
	mu        sync.Mutex
	mirror    *client.Mirror // nil: read the schema again
	history   string         // the history id the mirror's epochs count in
	resyncs   int            // resync messages applied
	changes   int            // HISTORY_CHANGED answers seen
	failovers int            // failovers Follow reported
	err       error          // what ended the consumer, if not its context
}

// run follows the cluster at endpoints until ctx ends or an error the
// consumer cannot handle: then err says what.
func (m *mirrorConsumer) run(ctx context.Context, endpoints []string) {
	cl, err := client.New(client.Config{Endpoints: endpoints})
	if err == nil {
		defer cl.Close()
		err = m.follow(ctx, cl)
	}
	if err != nil && ctx.Err() == nil {
		m.mu.Lock()
		m.err = err
		m.mu.Unlock()
	}
}

// follow is run's loop: from GetSchema when the consumer has no copy,
// then the feed from the copy's epoch, naming the copy's history.
func (m *mirrorConsumer) follow(ctx context.Context, cl *client.Client) error {
	retry := client.WatchRetry{OnFailover: func(client.WatchFailover) {
		m.mu.Lock()
		m.failovers++
		m.mu.Unlock()
	}}
	for ctx.Err() == nil {
		if err := m.start(ctx, cl); err != nil {
			continue // members down: try again
		}
		m.mu.Lock()
		req := &pb.WatchRequest{FromEpoch: new(m.mirror.Epoch()), HistoryId: m.history}
		m.mu.Unlock()
		for r := range cl.Follow(ctx, req, retry) {
			if errors.Is(r.Err, client.ErrHistoryChanged) {
				m.mu.Lock()
				m.mirror, m.changes = nil, m.changes+1
				m.mu.Unlock()
				break
			}
			if r.Err != nil {
				return r.Err
			}
			if err := m.apply(r.Response); err != nil {
				return err
			}
		}
	}
	return nil
}

// start reads the schema into a new copy when the consumer has none.
func (m *mirrorConsumer) start(ctx context.Context, cl *client.Client) error {
	m.mu.Lock()
	have := m.mirror != nil
	m.mu.Unlock()
	if have {
		return nil
	}
	resp, err := cl.GetSchema(ctx, &pb.GetSchemaRequest{})
	if err != nil {
		return err
	}
	mirror := client.NewMirror(nil)
	mirror.Reset(resp.GetEpoch(), resp.GetKeyspaces())
	m.mu.Lock()
	m.mirror, m.history = mirror, resp.GetHistoryId()
	m.mu.Unlock()
	return nil
}

// apply applies one message of the feed to the copy.
func (m *mirrorConsumer) apply(resp *pb.WatchResponse) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch h := resp.GetHistoryId(); {
	case m.history == "":
		m.history = h // a watch from epoch 0 learns its history from its first message
	case h != m.history:
		return fmt.Errorf("a message of history %s on a watch of history %s", h, m.history)
	}
	switch client.WatchTypeOf(resp) {
	case client.WatchResync:
		m.resyncs++
	case client.WatchEvents:
		// Each epoch once, in order: a message goes on from the copy's
		// epoch, and the events of one epoch (a statement's and those
		// derived from it) share it.
		last := m.mirror.Epoch()
		for i, ev := range resp.GetEvents() {
			if ev.GetEpoch() < last || i == 0 && ev.GetEpoch() == last {
				return fmt.Errorf("an event of epoch %d after epoch %d", ev.GetEpoch(), last)
			}
			last = ev.GetEpoch()
		}
	}
	return m.mirror.Apply(resp)
}

// counts returns the resyncs and history changes seen so far.
func (m *mirrorConsumer) counts() (resyncs, changes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.resyncs, m.changes
}

// consumerRun is one run of a mirrorConsumer, ended by stop.
type consumerRun struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func startConsumer(m *mirrorConsumer, endpoints []string) *consumerRun {
	ctx, cancel := context.WithCancel(context.Background())
	r := &consumerRun{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		m.run(ctx, endpoints)
	}()
	return r
}

func (r *consumerRun) stop() {
	r.cancel()
	<-r.done
}

// waitExact waits until the consumer's copy is at the epoch of the
// schema cl reads (no change being made meanwhile), then checks that it
// holds exactly the schema's objects, in the history cl answers for.
func waitExact(t *testing.T, m *mirrorConsumer, c *server, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	want, err := c.client().GetSchema(ctx, &pb.GetSchemaRequest{Consistency: "linearizable"})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	waitFor(t, time.Minute, what+": the consumer at the cluster's epoch", func() error {
		m.mu.Lock()
		defer m.mu.Unlock()
		switch {
		case m.err != nil:
			t.Fatalf("%s: the consumer failed: %v", what, m.err)
		case m.mirror == nil:
			return errors.New("the consumer reads the schema again")
		case m.mirror.Epoch() != want.GetEpoch() || m.history != want.GetHistoryId():
			return fmt.Errorf("the consumer is at epoch %d of history %s, the cluster at %d of %s", m.mirror.Epoch(), m.history, want.GetEpoch(), want.GetHistoryId())
		}
		return nil
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	if diff := m.mirror.Diff(client.SchemaObjects(want.GetKeyspaces())); len(diff) > 0 {
		t.Fatalf("%s: the consumer's copy at epoch %d differs from the schema:\n%s", what, want.GetEpoch(), strings.Join(diff, "\n"))
	}
	if m.mirror.Len() == 0 {
		t.Fatalf("%s: the copy is empty: the test made no schema", what)
	}
}

// churn executes n statements drawn by ddlgen from seed (every statement
// kind, on small name pools so that they meet: LIKE ... WITH INDEXES,
// cascading drops, ALTER TYPE reaching columns) on the members at
// endpoints, calling at(i) before statement i. A statement may be
// refused (a name taken, a drop of nothing) or fail while a member is
// killed: the consumer must follow whatever applied.
func churn(t *testing.T, endpoints []string, seed, n int, at func(i int)) {
	t.Helper()
	stmts := rapid.SliceOfN(rapid.Custom(func(rt *rapid.T) string { return ddlgen.Statement(rt, "s") }), n, n).Example(seed)
	cl, err := client.New(client.Config{Endpoints: endpoints})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	applied := 0
	for i, s := range stmts {
		if at != nil {
			at(i)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		if _, err := cl.Execute(ctx, &pb.ExecuteRequest{Statements: s}); err == nil {
			applied++
		}
		cancel()
	}
	if applied < n/4 {
		t.Fatalf("only %d of %d statements applied: the churn tests little", applied, n)
	}
	// A table of a keyspace ddlgen never names, with an index and a
	// view, so that no phase ends with an empty schema.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := cl.Execute(ctx, &pb.ExecuteRequest{Statements: fmt.Sprintf(`CREATE KEYSPACE IF NOT EXISTS anchor WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3};
		CREATE TABLE anchor.t%[1]d (id int, c int, v text, PRIMARY KEY (id, c));
		CREATE INDEX ON anchor.t%[1]d (v);
		CREATE MATERIALIZED VIEW anchor.v%[1]d AS SELECT * FROM anchor.t%[1]d WHERE id IS NOT NULL AND c IS NOT NULL PRIMARY KEY (c, id)`, seed)}); err != nil {
		t.Fatalf("the anchor table of churn %d: %v", seed, err)
	}
}

// epochOf returns the epoch of s's schema, read linearizably.
func epochOf(t *testing.T, s *server) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := s.client().GetSchema(ctx, &pb.GetSchemaRequest{Consistency: "linearizable"})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetEpoch()
}

// TestConsumerKeepsExactMirror: a consumer written on the client package
// alone keeps an exact structured copy of the schema from the change
// feed, starting from epoch 0, through kill -9 of leaders and followers,
// restarts of its own, log compaction and history pruning behind it (a
// resync), a restore from a backup into a new cluster and a forced new
// cluster (each a HISTORY_CHANGED it answers by reading the schema
// again). After each phase its copy equals the schema at the cluster's
// epoch, object by object.
func TestConsumerKeepsExactMirror(t *testing.T) {
	n := 240
	if testing.Short() {
		n = 80
	}
	const retention = 60
	c := newCluster(t, 3, "--snapshot-interval-entries", "20", "--snapshot-catch-up-entries", "5", "--history-retention-epochs", fmt.Sprint(retention))
	eps := strings.Split(c.endpoints(), ",")
	// Every statement kind ddlgen draws: views, functions and masks are
	// off by default.
	if out, stderr, rc := c.servers[0].cli("guardrails", "set", "materialized_views_enabled=true", "user_defined_functions_enabled=true", "dynamic_data_masking_enabled=true"); rc != 0 {
		t.Fatalf("guardrails set: rc=%d %s %s", rc, out, stderr)
	}
	m := &mirrorConsumer{mirror: client.NewMirror(nil)}
	run := startConsumer(m, eps)

	// Kills of the leader and of a follower, and restarts of the
	// consumer, while the schema changes.
	churn(t, eps, 1, n, func(i int) {
		switch i {
		case n / 4, n / 2:
			l := c.servers[c.leader()]
			l.kill()
			l.start()
		case n / 3:
			run.stop()
			run = startConsumer(m, eps)
		case 3 * n / 4:
			f := c.servers[(c.leader()+1)%3]
			f.kill()
			f.start()
		}
	})
	waitExact(t, m, c.servers[c.leader()], "after kills")

	// The consumer is away while more changes than the history keeps are
	// made and compacted: it comes back to a resync.
	run.stop()
	away := m.mirror.Epoch()
	for seed := 2; epochOf(t, c.servers[0]) <= away+retention; seed += 100 {
		churn(t, eps, seed, 60, nil)
	}
	// Members prune behind their flushes: wait until none keeps what the
	// consumer needs.
	waitFor(t, time.Minute, "every member pruned the epochs after the consumer's", func() error {
		for _, s := range c.servers {
			resp, err := s.client().History(context.Background(), &pb.HistoryRequest{Limit: 1})
			if err != nil || resp.GetOldestEpoch() <= away+1 {
				return fmt.Errorf("%s keeps from epoch %d (%v)", s.grpcAddr, resp.GetOldestEpoch(), err)
			}
		}
		return nil
	})
	resyncs, _ := m.counts()
	run = startConsumer(m, eps)
	waitExact(t, m, c.servers[c.leader()], "after compaction")
	if now, _ := m.counts(); now == resyncs {
		t.Errorf("the consumer came back past the history kept without a resync")
	}

	// A backup, more changes, then the cluster restored from the backup
	// into new members: epochs the consumer saw are made again with other
	// changes.
	backup := filepath.Join(t.TempDir(), "backup.snap")
	if out, stderr, rc := c.servers[0].cli("backup", "save", backup); rc != 0 {
		t.Fatalf("backup save: rc=%d %s %s", rc, out, stderr)
	}
	churn(t, eps, 3, 40, nil)
	waitExact(t, m, c.servers[c.leader()], "before the restore")
	for _, s := range c.servers {
		s.kill()
	}
	run.stop()
	r := restoredCluster(t, backup, 3)
	reps := strings.Split(r.endpoints(), ",")
	run = startConsumer(m, reps)
	churn(t, reps, 4, 40, nil)
	waitExact(t, m, r.servers[r.leader()], "after the restore")
	if _, changes := m.counts(); changes != 1 {
		t.Errorf("after the restore the consumer saw %d HISTORY_CHANGED, want 1", changes)
	}

	// Every member lost but one, forced into a new cluster: the consumer,
	// following all along, learns of the new history.
	for _, s := range r.servers {
		s.kill()
	}
	survivor := r.servers[0]
	survivor.start("--name", "n1", "--force-new-cluster")
	churn(t, []string{survivor.grpcAddr}, 5, 30, nil)
	waitExact(t, m, survivor, "after --force-new-cluster")
	run.stop()
	if _, changes := m.counts(); changes != 2 {
		t.Errorf("after the forced new cluster the consumer saw %d HISTORY_CHANGED in all, want 2", changes)
	}
	t.Logf("%d objects at the end; %d resyncs, %d history changes, %d failovers", m.mirror.Len(), m.resyncs, m.changes, m.failovers)
}
