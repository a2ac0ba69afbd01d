package member

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/metalog/metalog/metadata"
)

const writeKeyspace = "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"

// TestPrecheckRefusalSaysNothingApplied: a non-atomic request whose second
// statement the pre-check refuses is refused whole, before it is
// proposed, so its error must not say the first one applied, and its
// outcome has no results (the API counts statements from them).
func TestPrecheckRefusalSaysNothingApplied(t *testing.T) {
	m := startMember(t, nil)
	ctx := testContext(t)
	if _, err := m.Writes().Execute(ctx, Request{Statements: writeKeyspace}); err != nil {
		t.Fatal(err)
	}
	commit := m.core.node.Status().Commit
	out, err := m.Writes().Execute(ctx, Request{Statements: "CREATE TABLE shop.ok1 (id int PRIMARY KEY); CREATE TABLE shop.bad (id int PRIMARY KEY, id text)"})
	var serr *metadata.StatementError
	if !errors.As(err, &serr) || serr.Position != 2 || serr.Total != 2 || serr.Applied != 0 || !invalid(err) {
		t.Fatalf("err = %v, want statement 2 of 2 refused with nothing applied", err)
	}
	if strings.Contains(err.Error(), "applied") {
		t.Errorf("the refusal says statements applied: %v", err)
	}
	if len(out.Results) != 0 {
		t.Errorf("refused request has results %+v", out.Results)
	}
	if _, ok := m.core.sm.Current().Schema.Table("shop", "ok1"); ok || m.core.node.Status().Commit != commit {
		t.Fatalf("the refused request applied or was proposed (commit %d -> %d)", commit, m.core.node.Status().Commit)
	}
}

// TestRequestIDReusedRefusedBeforeProposing: a request reusing the id of
// another one is refused by the pre-check (InvalidArgument, naming the
// id, nothing proposed); the real retry still gets the first result, also
// after a restart; a guardrails change reusing it is refused at apply.
func TestRequestIDReusedRefusedBeforeProposing(t *testing.T) {
	dir := t.TempDir()
	m := startMember(t, func(c *Config) { c.DataDir = dir })
	ctx := testContext(t)
	first := Request{RequestID: "r1", Statements: writeKeyspace}
	want, err := m.Writes().Execute(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	check := func(m *Member) {
		t.Helper()
		epoch, commit := m.core.sm.Current().Epoch, m.core.node.Status().Commit
		for _, req := range []Request{
			{RequestID: "r1", Statements: writeKeyspace + " AND durable_writes = false"},
			{RequestID: "r1", Statements: writeKeyspace, Keyspace: "shop"},
			{RequestID: "r1", Statements: writeKeyspace, Atomic: true},
		} {
			out, err := m.Writes().Execute(ctx, req)
			if !errors.Is(err, metadata.ErrRequestIDReused) || !invalid(err) ||
				!strings.Contains(err.Error(), `request id "r1"`) || len(out.Results) != 0 {
				t.Errorf("%+v: %+v, %v; want InvalidArgument naming the id", req, out, err)
			}
		}
		if m.core.node.Status().Commit != commit || m.core.sm.Current().Epoch != epoch {
			t.Errorf("a reused id was proposed: commit %d -> %d", commit, m.core.node.Status().Commit)
		}
		got, err := m.Writes().Execute(ctx, first)
		if err != nil || got.Epoch != want.Epoch || len(got.Results) != 1 || got.Results[0].Epoch != want.Results[0].Epoch {
			t.Errorf("retry: %+v, %v; want %+v", got, err, want)
		}
		for _, n := range []int{metadata.MaxRequestIDBytes + 1, 1 << 20} {
			out, err := m.Writes().Execute(ctx, Request{RequestID: strings.Repeat("r", n), Statements: "CREATE TABLE shop.t (id int PRIMARY KEY)"})
			if !invalid(err) || len(err.Error()) > 1024 || len(out.Results) != 0 || m.core.node.Status().Commit != commit {
				t.Errorf("request id of %d bytes: %.400v", n, err)
			}
		}
	}
	check(m)
	if _, _, err := m.Writes().SetGuardrails(ctx, "", "r1", map[string]string{"tables_warn_threshold": "5"}); !invalid(err) || !errors.Is(err, metadata.ErrRequestIDReused) {
		t.Errorf("guardrails change under a reused id: %v", err)
	}
	if m.core.sm.Current().Guardrails.TablesWarnThreshold == 5 {
		t.Error("the guardrails change under a reused id applied")
	}
	m.Close()
	check(startMember(t, func(c *Config) { c.DataDir = dir }))
}

// TestServerRequestID checks the form of the request id the member gives
// a command without one, that two differ, and that making one takes a
// single allocation (the prefix was concatenated to the hex before).
func TestServerRequestID(t *testing.T) {
	a, b := serverRequestID(), serverRequestID()
	if !regexp.MustCompile(`^server-[0-9a-f]{32}$`).MatchString(a) {
		t.Fatalf("server request id %q, want server- and 32 hex digits", a)
	}
	if a == b {
		t.Fatalf("two server request ids are both %q", a)
	}
	if n := testing.AllocsPerRun(100, func() { _ = serverRequestID() }); n != 1 && !raceEnabled {
		t.Errorf("serverRequestID makes %.0f allocations, want 1", n)
	}
}

// TestChangeLargerThanMaxMutationSizeRefused: a change whose log entry
// would be larger than max_mutation_size is refused before it is
// proposed (InvalidArgument, nothing applied): the peers refuse larger
// messages, so it could never reach them.
func TestChangeLargerThanMaxMutationSizeRefused(t *testing.T) {
	const limit = 64 << 10
	m := startMember(t, func(c *Config) { c.MaxMutationSize = limit })
	ctx := testContext(t)
	if _, err := m.Writes().Execute(ctx, Request{Statements: writeKeyspace}); err != nil {
		t.Fatal(err)
	}
	commit := m.core.node.Status().Commit
	// A small table whose statement is long: only its text is large.
	stmt := "CREATE TABLE shop.t (id int PRIMARY KEY) /* " + strings.Repeat("x", 2*limit) + " */"
	out, err := m.Writes().Execute(ctx, Request{Statements: stmt})
	if !errors.Is(err, ErrEntryTooLarge) || kinds(err) != "[ErrEntryTooLarge]" || len(out.Results) != 0 ||
		!strings.Contains(err.Error(), "max_mutation_size (65536 bytes); nothing was applied") {
		t.Fatalf("err = %v, want ErrEntryTooLarge (InvalidArgument) saying nothing was applied", err)
	}
	if _, ok := m.core.sm.Current().Schema.Table("shop", "t"); ok || m.core.node.Status().Commit != commit {
		t.Fatalf("the refused change applied or was proposed (commit %d -> %d)", commit, m.core.node.Status().Commit)
	}
	if _, err := m.Writes().Execute(ctx, Request{Statements: "CREATE TABLE shop.t (id int PRIMARY KEY) /* short */"}); err != nil {
		t.Fatalf("the same change, short: %v", err)
	}
}
