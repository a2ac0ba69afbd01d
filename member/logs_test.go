package member

import (
	"bytes"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// logBuffer is a bytes.Buffer for a logger written from many goroutines.
type logBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) lines(match string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, l := range strings.Split(b.buf.String(), "\n") {
		if strings.Contains(l, match) {
			out = append(out, l)
		}
	}
	return out
}

// TestLogLines: at INFO a member logs one line per guardrail change and
// per stored snapshot, leaves raft's election chatter to DEBUG (its own
// leader change stays), and prints raft ids in hex.
func TestLogLines(t *testing.T) {
	var logs logBuffer
	m := startMember(t, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
		c.SnapshotEntries = 3
	})
	ctx := testContext(t)
	if _, _, err := m.Writes().SetGuardrails(ctx, "", "g1", map[string]string{"tables_warn_threshold": "7"}); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE ks.a (id int PRIMARY KEY)", "CREATE TABLE ks.b (id int PRIMARY KEY)", "CREATE TABLE ks.c (id int PRIMARY KEY)",
	} {
		if _, err := m.Writes().Execute(ctx, Request{Statements: stmt}); err != nil {
			t.Fatal(err)
		}
	}
	waitForLog(t, &logs, "snapshot stored")
	if got := logs.lines("guardrails changed"); len(got) != 1 || !strings.Contains(got[0], "tables_warn_threshold=7") {
		t.Errorf("guardrail change logged %d times, want once with the setting: %q", len(got), got)
	}
	seen := map[string]bool{}
	index := regexp.MustCompile(`index=(\d+)`)
	for _, l := range logs.lines("snapshot stored") {
		i := index.FindStringSubmatch(l)[1]
		if seen[i] {
			t.Errorf("the snapshot at index %s is logged twice:\n%s", i, strings.Join(logs.lines("snapshot stored"), "\n"))
		}
		seen[i] = true
	}
	for _, chatter := range []string{"became leader", "became candidate", "became follower", "switched to configuration"} {
		if got := logs.lines(chatter); len(got) > 0 {
			t.Errorf("raft chatter at INFO: %q", got)
		}
	}
	if len(logs.lines("leader changed")) == 0 {
		t.Error("the leader change is not logged")
	}
	hex := strconv.FormatUint(ID("n1"), 16)
	raftIDs := regexp.MustCompile(`raft_id=(\S+)`)
	for _, l := range logs.lines("raft_id=") {
		if id := raftIDs.FindStringSubmatch(l)[1]; id != hex {
			t.Errorf("raft_id=%s in %q, want %s (hex)", id, l, hex)
		}
	}
}

func waitForLog(t *testing.T, logs *logBuffer, what string) {
	t.Helper()
	ctx := testContext(t)
	for len(logs.lines(what)) == 0 {
		select {
		case <-ctx.Done():
			t.Fatalf("no %q in the log", what)
		default:
		}
	}
}
