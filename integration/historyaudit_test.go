package integration

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// execObject runs exec with one statement of kind and returns the name
// exec printed for what it changed.
func execObject(t *testing.T, s *server, kind, cql string) string {
	t.Helper()
	out, stderr, rc := s.cli("exec", "-e", cql)
	m := regexp.MustCompile(`(?m)^` + kind + `\s+(\S+)\s+applied\s+epoch \d+$`).FindStringSubmatch(out)
	if rc != 0 || m == nil {
		t.Fatalf("exec %s: rc=%d\n%s%s", cql, rc, out, stderr)
	}
	return m[1]
}

// TestCLINamesPasteBack: the names exec and history print for a
// mixed-case keyspace work when pasted back: describe of what exec printed
// finds the table, and history of it prints its changes, named the same.
func TestCLINamesPasteBack(t *testing.T) {
	s := newServer(t)
	s.start()
	ks := execObject(t, s, "CREATE KEYSPACE", `CREATE KEYSPACE "KsMixed" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	table := execObject(t, s, "CREATE TABLE", `CREATE TABLE "KsMixed".tb31 (k int PRIMARY KEY, "Value" int)`)
	if ks != `"KsMixed"` || table != `"KsMixed".tb31` {
		t.Errorf("exec printed %s and %s, want \"KsMixed\" and \"KsMixed\".tb31", ks, table)
	}
	out, stderr, rc := s.cli("describe", table)
	if rc != 0 || !strings.HasPrefix(out, `CREATE TABLE "KsMixed".tb31 (`) {
		t.Fatalf("describe %s (as exec printed it): rc=%d\n%s%s", table, rc, out, stderr)
	}
	out, stderr, rc = s.cli("history", table)
	if rc != 0 || !strings.Contains(out, "  CREATE TABLE "+table+"  request ") {
		t.Errorf("history %s: rc=%d, want its CREATE TABLE named %s:\n%s%s", table, rc, table, out, stderr)
	}
}

// TestCLIHistoryAudit: on a real member, history's filters keep the
// changes asked for (kind, principal, time range), --diff shows what an
// ALTER TABLE did to the table's DESCRIBE text, and once retention has
// pruned, plain history prints from the oldest epoch kept and says so.
func TestCLIHistoryAudit(t *testing.T) {
	s := newServer(t)
	s.start("--history-retention-epochs", "4")
	for _, cql := range []string{
		"CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE shop.orders (id int PRIMARY KEY, total int)",
		"ALTER TABLE shop.orders ADD note text",
	} {
		if out, stderr, rc := s.cli("exec", "-e", cql); rc != 0 {
			t.Fatalf("exec %s: rc=%d\n%s%s", cql, rc, out, stderr)
		}
	}
	kinds := func(args ...string) string {
		t.Helper()
		out, stderr, rc := s.cli(append([]string{"history", "--json"}, args...)...)
		if rc != 0 {
			t.Fatalf("history %q: rc=%d\n%s%s", args, rc, out, stderr)
		}
		return strings.Join(regexp.MustCompile(`"kind":"([A-Z ]+)"`).FindAllString(out, -1), " ")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--kind", "alter table"}, `"kind":"ALTER TABLE"`},
		{[]string{"--kind", "CREATE TABLE", "--principal", "anonymous", "--since", "1h"}, `"kind":"CREATE TABLE"`},
		{[]string{"--principal", "nobody"}, ""},
		{[]string{"--until", "2000-01-01"}, ""},
		{[]string{"shop.orders", "--since", "2000-01-01", "--until", "2999-01-01"}, `"kind":"CREATE TABLE" "kind":"ALTER TABLE"`},
	} {
		if got := kinds(tc.args...); got != tc.want {
			t.Errorf("history %q: kinds %s, want %s", tc.args, got, tc.want)
		}
	}
	out, stderr, rc := s.cli("history", "--diff", "--kind", "ALTER TABLE")
	if rc != 0 || !strings.Contains(out, "    ALTER TABLE shop.orders ADD note text\n    --- before\n    +++ after\n     CREATE TABLE shop.orders (\n") ||
		!strings.Contains(out, "\n         id int PRIMARY KEY,\n    +    note text,\n         total int\n") {
		t.Errorf("history --diff: rc=%d, want the ALTER TABLE's diff adding note:\n%s%s", rc, out, stderr)
	}
	prunedHistory(t, s)
}

// prunedHistory makes more epochs than s keeps (--history-retention-epochs
// 4), waits until it has pruned, and checks that plain history prints the
// changes from the oldest epoch kept and says so on stderr.
func prunedHistory(t *testing.T, s *server) {
	t.Helper()
	for i := range 8 {
		cql := fmt.Sprintf("CREATE TABLE shop.t%d (id int PRIMARY KEY)", i)
		if out, stderr, rc := s.cli("exec", "-e", cql); rc != 0 {
			t.Fatalf("exec %s: rc=%d\n%s%s", cql, rc, out, stderr)
		}
	}
	var oldest uint64
	waitFor(t, 30*time.Second, "the member to prune its history", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := s.client().History(ctx, &pb.HistoryRequest{Limit: 1})
		if err != nil {
			return err
		}
		if oldest = r.OldestEpoch; oldest <= 1 {
			return fmt.Errorf("oldest epoch kept %d", oldest)
		}
		return nil
	})
	out, stderr, rc := s.cli("history")
	first := regexp.MustCompile(`^epoch (\d+) `).FindStringSubmatch(out)
	note := regexp.MustCompile(`history: the members keep the changes from epoch (\d+) on \(retention pruned the older ones\); printing from there\n`).FindStringSubmatch(stderr)
	if rc != 0 || first == nil || note == nil || first[1] != note[1] {
		t.Fatalf("history after pruning: rc=%d, want the changes from the epoch the note on stderr names:\n%s%s", rc, out, stderr)
	}
	if n, _ := strconv.ParseUint(first[1], 10, 64); n < oldest {
		t.Errorf("history after pruning starts at epoch %d, before %d, the oldest kept", n, oldest)
	}
	if !strings.Contains(out, "CREATE TABLE shop.t7") {
		t.Errorf("history after pruning does not reach the last change:\n%s", out)
	}
}
