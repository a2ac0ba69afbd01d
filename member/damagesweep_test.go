package member

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/metalog/metalog/schema/describe"
)

// The damage sweep (issue 30, integrity at rest): a small data dir is
// built once, then damaged many ways (a byte changed, a page zeroed, a
// file cut short) in every page header and record of its files and at a
// fixed-seed sample of other offsets, and a member is started on each
// damaged copy. Whatever the damage, the member must not panic; it either
// serves exactly the schema that was acknowledged before the damage, or
// refuses to start with an error that names the damaged file.
//
// Each start runs in a child process (this test binary, running
// TestDamageSweepChild), so that a panic or a hang in one case is that
// case's failure and the sweep still reports every other one.

// sweepChildEnv names the data dir a child process starts a member on.
const sweepChildEnv = "METALOG_DAMAGE_SWEEP_DIR"

// sweepResultPrefix starts the line a child prints its result on.
const sweepResultPrefix = "DAMAGE-SWEEP-RESULT "

// sweepAck is the schema a data dir holds: what was acknowledged before
// it was stopped, or what a member started on it serves.
type sweepAck struct {
	Epoch    uint64 `json:"epoch"`
	Digest   string `json:"digest"`
	Describe string `json:"describe"`
	// Guardrails are the guardrail settings, and whether they were set.
	Guardrails string `json:"guardrails"`
}

func (a sweepAck) String() string {
	sum := sha256.Sum256([]byte(a.Describe))
	g := sha256.Sum256([]byte(a.Guardrails))
	return fmt.Sprintf("epoch %d digest %.16s describe %.12x guardrails %.12x", a.Epoch, a.Digest, sum, g)
}

// sweepResult is what a child reports of a start.
type sweepResult struct {
	// Outcome is "served" (ready, serving Schema), "refused" (Start
	// failed with Err) or "stopped" (started, then a fatal error Err
	// before or instead of serving).
	Outcome string   `json:"outcome"`
	Err     string   `json:"err,omitempty"`
	Schema  sweepAck `json:"schema"`
}

// ackOf is the schema m serves now.
func ackOf(m *Member) sweepAck {
	cur := m.core.sm.Current()
	d := cur.Schema.Digest()
	return sweepAck{Epoch: cur.Epoch, Digest: hex.EncodeToString(d[:]), Describe: describe.Schema(cur.Schema),
		Guardrails: fmt.Sprintf("%+v set %v", cur.Guardrails, cur.GuardrailsSet)}
}

// sweepDDL is the schema of the swept data dir: keyspaces, types,
// tables, indexes, a function, changes and drops, so that the store holds
// every family and deleted pages.
var sweepDDL = []string{
	"CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
	"CREATE TYPE shop.addr (street text, city text)",
	"CREATE TABLE shop.users (id int PRIMARY KEY, name text, home frozen<addr>)",
	"CREATE INDEX ON shop.users (name)",
	"CREATE TABLE shop.orders (id int, line int, sku text, PRIMARY KEY (id, line))",
	"CREATE KEYSPACE logs WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
	"CREATE TABLE logs.events (day text, at timeuuid, body text, PRIMARY KEY (day, at))",
	"CREATE FUNCTION shop.plus(s int, v int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return s + v;'",
	"ALTER TABLE shop.users ADD email text",
	"CREATE TABLE logs.scratch (id int PRIMARY KEY)",
	"DROP TABLE logs.scratch",
	"CREATE TABLE shop.carts (id int PRIMARY KEY, items list<text>)",
	"CREATE INDEX ON shop.orders (sku)",
	"ALTER TABLE logs.events ADD source text",
}

// sweepConfig is the config of every member the sweep starts on dir:
// snapshots every 5 entries, the log compacted up to the snapshot.
func sweepConfig(dir string) Config {
	return Config{Name: "n1", DataDir: dir, PeerAddr: "127.0.0.1:0", SnapshotEntries: 5, SnapshotCatchUpEntries: 1}
}

// buildSweepDir builds the swept data dir in dir: guardrails set, the
// statements of sweepDDL, at least one snapshot (the log compacted behind
// it) and entries after the newest one, stopped cleanly. With behind, the
// member is stopped and started again before two more statements, and the
// schema store of before them is put back: a store behind the log, as a
// stop without drain leaves it. It returns the schema acknowledged.
func buildSweepDir(t *testing.T, dir string, behind bool) sweepAck {
	t.Helper()
	m := startSweepMember(t, dir)
	ctx := testContext(t)
	// Guardrails set (a record of the store's meta), functions allowed.
	if _, _, err := m.Writes().SetGuardrails(ctx, "", "", map[string]string{"user_defined_functions_enabled": "true", "tables_warn_threshold": "500"}); err != nil {
		t.Fatal(err)
	}
	sweepExec(t, m, sweepDDL...)
	// Entries after the newest snapshot: a start replays a log tail.
	for i := 0; m.core.sm.Current().Index < newestSnapIndex(t, dir)+2; i++ {
		if i == 10 {
			t.Fatalf("no log entries after the snapshot at %d", newestSnapIndex(t, dir))
		}
		sweepExec(t, m, fmt.Sprintf("CREATE TABLE logs.tail%d (id int PRIMARY KEY)", i))
	}
	old := filepath.Join(dir, "schema.db.old")
	if behind {
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		if err := copySparse(filepath.Join(dir, "schema.db"), old); err != nil {
			t.Fatal(err)
		}
		m = startSweepMember(t, dir)
		sweepExec(t, m, "CREATE TABLE logs.late (id int PRIMARY KEY)", "ALTER TABLE shop.carts ADD note text")
	}
	ack := ackOf(m)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if behind {
		if err := os.Rename(old, filepath.Join(dir, "schema.db")); err != nil {
			t.Fatal(err)
		}
	}
	return ack
}

// startSweepMember starts a member on dir, closed at the end of the test
// (again: Close may be called more than once), and waits until it is
// ready.
func startSweepMember(t *testing.T, dir string) *Member {
	t.Helper()
	m, err := Start(sweepConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	waitReady(t, m)
	return m
}

// sweepExec executes each statement on m.
func sweepExec(t *testing.T, m *Member, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := m.Writes().Execute(testContext(t), Request{Statements: s}); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// newestSnapIndex is the index of the newest snapshot file in dir, 0 if
// there is none.
func newestSnapIndex(t *testing.T, dir string) uint64 {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "snap", "*.snap"))
	var newest uint64
	for _, f := range files {
		var term, index uint64
		if _, err := fmt.Sscanf(filepath.Base(f), "%016x-%016x.snap", &term, &index); err == nil {
			newest = max(newest, index)
		}
	}
	return newest
}

// TestDamageSweepChild is the child process of the sweep: it starts a
// member on the data dir sweepChildEnv names and prints what happened.
// It does nothing in a plain test run.
func TestDamageSweepChild(t *testing.T) {
	dir := os.Getenv(sweepChildEnv)
	if dir == "" {
		t.Skip("the child of TestDamageSweep, run by it")
	}
	res := startSwept(dir)
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("\n%s%s\n", sweepResultPrefix, b)
}

// notReady starts the error of a member that neither serves nor stops.
const notReady = "not ready within 5s: "

// startSwept starts a member on dir and waits until it serves, fails to
// start or stops.
func startSwept(dir string) sweepResult {
	m, err := Start(sweepConfig(dir))
	if err != nil {
		return sweepResult{Outcome: "refused", Err: err.Error()}
	}
	defer m.Close()
	// A member alone elects itself at once: not ready in 5s is a hang.
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !m.Readiness().Ready {
		select {
		case err := <-m.Err():
			return sweepResult{Outcome: "stopped", Err: err.Error()}
		case <-deadline.C:
			return sweepResult{Outcome: "stopped", Err: notReady + m.Readiness().Detail}
		case <-tick.C:
		}
	}
	return sweepResult{Outcome: "served", Schema: ackOf(m)}
}

// runSweepChild starts a child process on dir and returns its result; a
// panic, a hang or an exit without a result is an error with the end of
// its output.
func runSweepChild(ctx context.Context, dir string) (sweepResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestDamageSweepChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), sweepChildEnv+"="+dir)
	out, runErr := cmd.CombinedOutput()
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), sweepResultPrefix); ok {
			var res sweepResult
			if err := json.Unmarshal([]byte(line), &res); err != nil {
				return res, fmt.Errorf("undecodable result %q: %w", line, err)
			}
			if runErr != nil {
				return res, fmt.Errorf("child failed after its result (%v): %s", runErr, tail(out))
			}
			return res, nil
		}
	}
	if ctx.Err() != nil {
		return sweepResult{}, fmt.Errorf("child hung: %s", tail(out))
	}
	return sweepResult{}, fmt.Errorf("child ended without a result (%v): %s", runErr, tail(out))
}

// tail is the start of a panic or a fatal error in out (its message and
// the frames below it, without the test framework's), or the end of out.
func tail(out []byte) string {
	s := string(out)
	for _, mark := range []string{"panic:", "fatal error:"} {
		i := strings.Index(s, mark)
		if i < 0 {
			continue
		}
		var keep []string
		for _, line := range strings.Split(s[i:], "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "/") || strings.Contains(line, "testing.") || strings.HasPrefix(line, "panic(") || strings.HasPrefix(line, "runtime.") || line == "" {
				continue
			}
			if keep = append(keep, strings.TrimSpace(line)); len(keep) == 8 {
				break
			}
		}
		return strings.Join(keep, " <- ")
	}
	return s[max(0, len(s)-600):]
}

// sweepCase is one start of the sweep: a copy of the pristine data dir
// Dir (named Name) with one damage.
type sweepCase struct {
	Name string
	Dir  string
	Ack  sweepAck
	D    damage
	// res and err are what the start gave.
	res sweepResult
	err error
	// took is how long the child ran, for the report (never asserted).
	took time.Duration
}

// TestDamageSweep damages a small data dir (schema.db, raft.db, the WAL
// segment, the snapshot files) in every page header, every record and at
// a fixed-seed sample of other offsets, one damage at a time, and starts
// a member on each damaged copy: no panic, and the member serves exactly
// the acknowledged schema or refuses to start naming the damaged file.
func TestDamageSweep(t *testing.T) {
	root := t.TempDir()
	var cases []*sweepCase
	for _, b := range []struct {
		name   string
		behind bool
	}{{"clean", false}, {"behind", true}} {
		dir := filepath.Join(root, b.name)
		ack := buildSweepDir(t, dir, b.behind)
		for _, d := range sweepDamages(t, dir, b.behind) {
			cases = append(cases, &sweepCase{Name: b.name, Dir: dir, Ack: ack, D: d})
		}
	}
	if raceEnabled {
		// Each start is a race-instrumented process, several times
		// slower: a fixed eighth of the cases (the undamaged dirs among
		// them) keeps the race build's run bounded.
		var some []*sweepCase
		for i, c := range cases {
			if i%8 == 0 || c.D.Op == "none" {
				some = append(some, c)
			}
		}
		t.Logf("race build: %d of the %d cases", len(some), len(cases))
		cases = some
	}
	start := time.Now()
	runSweep(t, filepath.Join(root, "cases"), cases)
	t.Logf("%d starts in %v", len(cases), time.Since(start).Round(time.Millisecond))
	var failed []string
	for _, c := range cases {
		if testing.Verbose() {
			t.Logf("%s dir, %v: %s in %v %s", c.Name, c.D, c.kind(), c.took.Round(time.Millisecond), shortErr(c.res.Err))
		}
		if why := c.verdict(); why != "" {
			failed = append(failed, fmt.Sprintf("%s dir, %v: %s", c.Name, c.D, why))
		}
	}
	t.Log(sweepSummary(cases))
	for _, f := range failed {
		t.Error(f)
	}
}

// sweepDamages are the damages swept in the pristine data dir dir: the
// undamaged dir first, then every file's. A store behind the log gets
// only the damages of its store (the rest is the clean dir's).
func sweepDamages(t *testing.T, dir string, behind bool) []damage {
	t.Helper()
	rng := rand.New(rand.NewPCG(30, 6))
	ds := []damage{{File: "schema.db", What: "undamaged", Op: "none"}}
	if behind {
		// The store and the log tail that brings it up to date.
		for _, d := range boltDamages(t, dir, "schema.db", rng, 0) {
			if d.Op != "xor" || strings.HasPrefix(d.What, "value of /tables") {
				ds = append(ds, d)
			}
		}
		ds = append(ds, walDamages(t, dir, 3)...)
		return append(ds, damage{File: "schema.db", What: "removed", Op: "remove"})
	}
	ds = append(ds, boltDamages(t, dir, "schema.db", rng, 8)...)
	ds = append(ds, boltDamages(t, dir, "raft.db", rng, 4)...)
	ds = append(ds, walDamages(t, dir, 0)...)
	ds = append(ds, snapDamages(t, dir, rng, 6)...)
	for _, f := range []string{"schema.db", "raft.db", walSegment(t, dir)} {
		ds = append(ds, damage{File: f, What: "removed", Op: "remove"})
	}
	return ds
}

// walSegment is the WAL segment of the data dir dir, relative to it.
func walSegment(t *testing.T, dir string) string {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(dir, "wal", "*.wal"))
	if len(segs) != 1 {
		t.Fatalf("WAL segments %v, want one", segs)
	}
	return filepath.Join("wal", filepath.Base(segs[0]))
}

// runSweep starts a member on a damaged copy of each case's data dir,
// under work, in child processes, as many at a time as there are CPUs.
func runSweep(t *testing.T, work string, cases []*sweepCase) {
	t.Helper()
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(2, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := range next {
				c := cases[i]
				dir := filepath.Join(work, fmt.Sprint(i))
				if err := copyDir(c.Dir, dir); err != nil {
					c.err = err
					continue
				}
				if err := c.D.apply(dir); err != nil {
					c.err = fmt.Errorf("apply the damage: %w", err)
					continue
				}
				start := time.Now()
				c.res, c.err = runSweepChild(t.Context(), dir)
				c.took = time.Since(start)
				_ = os.RemoveAll(dir)
			}
		})
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()
}

// verdict is why the case breaks the contract, "" if it keeps it: the
// member serves exactly the acknowledged schema, or refuses to start (or
// stops before serving) with an error naming the damaged file.
func (c *sweepCase) verdict() string {
	file := filepath.Base(c.D.File)
	switch {
	case c.err != nil:
		return c.err.Error()
	case c.tornTail():
		return ""
	case c.res.Outcome == "served" && c.res.Schema != c.Ack:
		return fmt.Sprintf("serves %v, not the acknowledged %v", c.res.Schema, c.Ack)
	case c.res.Outcome == "served":
		return ""
	case !strings.Contains(c.res.Err, file):
		return fmt.Sprintf("%s with an error that does not name %s: %s", c.res.Outcome, file, shortErr(c.res.Err))
	}
	return ""
}

// tornTail reports a wal segment cut short that the member read as a
// crash in the middle of its last write, serving the state of before the
// records cut off. Nothing in the data dir tells the two apart (etcd's wal
// repair cuts such a tail the same way); the records were fsynced on a
// quorum, which restores them to a member of a cluster. It is the one
// case where a member alone serves less than was acknowledged: the README
// says so.
func (c *sweepCase) tornTail() bool {
	return c.err == nil && c.res.Outcome == "served" && c.D.Op == "truncate" &&
		strings.HasPrefix(filepath.Base(c.D.File), "0") && strings.HasSuffix(c.D.File, ".wal") &&
		c.res.Schema.Epoch < c.Ack.Epoch
}

// kind is the case's outcome for the summary.
func (c *sweepCase) kind() string {
	switch {
	case c.err != nil && strings.Contains(c.err.Error(), "panic:"):
		return "PANIC"
	case c.err != nil:
		return "FAILED"
	case c.tornTail():
		return "served-before-the-cut"
	case c.verdict() != "" && c.res.Outcome == "served":
		return "SERVED-OTHER"
	case strings.HasPrefix(c.res.Err, notReady):
		return "HANG"
	case c.verdict() != "":
		return c.res.Outcome + "-UNNAMED"
	}
	return c.res.Outcome
}

// sweepSummary counts the outcomes by dir and file.
func sweepSummary(cases []*sweepCase) string {
	counts := map[string]map[string]int{}
	var keys []string
	for _, c := range cases {
		file := c.D.File
		if strings.HasPrefix(file, "wal/") || strings.HasPrefix(file, "snap/") {
			file = filepath.Dir(file) + "/" + filepath.Base(file)
		}
		key := c.Name + " " + file
		if counts[key] == nil {
			counts[key] = map[string]int{}
			keys = append(keys, key)
		}
		counts[key][c.kind()]++
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString("damage sweep summary (dir file: outcome count):\n")
	for _, k := range keys {
		kinds := slices.Sorted(maps.Keys(counts[k]))
		fmt.Fprintf(&b, "  %-50s", k)
		for _, kind := range kinds {
			fmt.Fprintf(&b, " %s=%d", kind, counts[k][kind])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// shortErr shortens an error for the report.
func shortErr(s string) string {
	if len(s) > 400 {
		return s[:400] + "..."
	}
	return s
}
