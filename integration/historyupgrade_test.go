package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/member"
)

// The environment of a metalog_faults build (member/legacyhook.go) that
// the tests below use: a bootstrap that records no history naming, as
// versions before history names made their data dirs, and a member that
// names its cluster's history only once a file exists.
const (
	legacyHistoryEnv   = "METALOG_LEGACY_HISTORY=1"
	holdHistoryNameEnv = "METALOG_HOLD_HISTORY_NAME_FILE="
)

// Lines a member logs when it proposes a history name, and when one
// applies (metadata: the state machine's log of a name that changed it).
const (
	proposingNameLog = "proposing a name for the cluster's history"
	nameAppliedLog   = "history named"
)

// derivedHistoryID is the history id of a cluster that does not name its
// history: the one derived from its cluster id (text, as the members
// answer it) alone, as versions before history names derived it.
func derivedHistoryID(t *testing.T, cluster string) string {
	t.Helper()
	id, err := strconv.ParseUint(cluster, 16, 64)
	if err != nil {
		t.Fatalf("cluster id %q: %v", cluster, err)
	}
	return member.FormatHistoryID(member.HistoryID(id, 0))
}

// historyNamed returns what s's ListMembers says of the naming of its
// cluster's history.
func historyNamed(t *testing.T, s *server) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := s.client().ListMembers(ctx, &pb.ListMembersRequest{})
	if err != nil {
		t.Fatalf("list members: %v", err)
	}
	return resp.GetHistoryNamed()
}

// readyz returns the status code and body of s's /readyz.
func readyz(t *testing.T, s *server) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + s.httpAddr + "/readyz")
	if err != nil {
		t.Fatalf("readyz: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("readyz: %v", err)
	}
	return resp.StatusCode, string(b)
}

// TestRollingUpgradeKeepsTheDerivedHistoryID: a cluster whose data dirs
// were made as versions before history names made them (no naming
// recorded), upgraded one member at a time, keeps the history id derived
// from its cluster id on every member, the one it had before, through
// every restart and a join: no member ever proposes a history name, and
// none applies (every entry of the log applies on every member of this
// version, and each logs the name that applies). This is the README's
// upgrade statement: a rolling upgrade proposes nothing and changes no
// history id.
func TestRollingUpgradeKeepsTheDerivedHistoryID(t *testing.T) {
	before := taggedBinary(t, faultsTags)
	c := newClusterOf(t, 3, func(s *server) { s.bin, s.env = before, []string{legacyHistoryEnv} })
	execAll(t, c.servers[0].client(), ks1)
	want := sharedIdentity(t, c)
	if want.history != derivedHistoryID(t, want.cluster) {
		t.Fatalf("the cluster to upgrade answers %+v, want the history id derived from its cluster id, %s", want, derivedHistoryID(t, want.cluster))
	}
	var logs []string
	check := func(when string) {
		t.Helper()
		if got := sharedIdentity(t, c); got != want {
			t.Errorf("%s: the members answer %+v, before the upgrade %+v", when, got, want)
		}
		for i, s := range c.servers {
			if historyNamed(t, s) {
				t.Errorf("%s: %s says its cluster names its history", when, c.names[i])
			}
		}
	}
	for i, s := range c.servers {
		logs = append(logs, s.stderr.String())
		s.stop()
		s.bin, s.env = "", nil
		s.start()
		execAll(t, c.servers[(i+1)%3].client(), fmt.Sprintf("CREATE TABLE ks.upgraded_%d (id int PRIMARY KEY)", i))
		c.waitSameDigest()
		check(fmt.Sprintf("after upgrading %s", c.names[i]))
	}

	joiner := newServer(t)
	if out, stderr, rc := c.servers[0].cli("cluster", "add", "--name", "n4", "--peer-addr", joiner.peers); rc != 0 {
		t.Fatalf("cluster add: rc=%d %s %s", rc, out, stderr)
	}
	joiner.start("--name", "n4", "--join", c.servers[0].grpcAddr)
	c.servers, c.names = append(c.servers, joiner), append(c.names, "n4")
	c.waitVoter("n4")
	check("after a join")
	for _, s := range c.servers {
		logs = append(logs, s.stderr.String())
		s.stop()
		s.start()
	}
	c.waitSameDigest()
	check("after every member restarted")
	for _, s := range c.servers {
		logs = append(logs, s.stderr.String())
	}
	for _, l := range logs {
		if strings.Contains(l, proposingNameLog) || strings.Contains(l, nameAppliedLog) {
			t.Fatalf("a member of the upgraded cluster proposed or applied a history name:\n%s", l)
		}
	}
}

// TestJoinerOfANamedClusterWaitsForTheName: a member that joins a cluster
// begun by this version before the cluster has named its history (held)
// learns that the cluster names it (history_named), answers no history id
// (never the one derived from the cluster id), is not ready, and answers a
// watch naming a history id with Unavailable; once the founding member
// names the history, the joiner answers its id, like the founding member,
// and through a restart.
func TestJoinerOfANamedClusterWaitsForTheName(t *testing.T) {
	release := filepath.Join(t.TempDir(), "name-the-history")
	founder := newServer(t)
	founder.bin, founder.env = taggedBinary(t, faultsTags), []string{holdHistoryNameEnv + release}
	founder.args = []string{"--name", "n1"}
	founder.startAsync()
	waitFor(t, 30*time.Second, "n1 leads", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := founder.client().ListMembers(ctx, &pb.ListMembersRequest{})
		if err != nil || r.GetLeader() == "" {
			return fmt.Errorf("list members: leader %q, %v", r.GetLeader(), err)
		}
		return nil
	})
	execAll(t, founder.client(), ks1)
	if !historyNamed(t, founder) {
		t.Fatal("a cluster bootstrapped by this version does not say it names its history")
	}
	joiner := newServer(t)
	if out, stderr, rc := founder.cli("cluster", "add", "--name", "n2", "--peer-addr", joiner.peers); rc != 0 {
		t.Fatalf("cluster add: rc=%d %s %s", rc, out, stderr)
	}
	joiner.args = []string{"--name", "n2", "--join", founder.grpcAddr}
	joiner.startAsync()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	waitFor(t, 30*time.Second, "n2 holds the keyspace", func() error {
		r, err := joiner.client().GetSchema(ctx, &pb.GetSchemaRequest{})
		if err != nil || r.GetEpoch() < 1 {
			return fmt.Errorf("schema at epoch %d: %v", r.GetEpoch(), err)
		}
		return nil
	})
	r, err := joiner.client().ListMembers(ctx, &pb.ListMembersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	derived := derivedHistoryID(t, r.GetClusterId())
	if r.GetHistoryId() != "" || !r.GetHistoryNamed() {
		t.Fatalf("the joiner, before the name applies, answers history %q named %v: want none, and named (never the derived %s)", r.GetHistoryId(), r.GetHistoryNamed(), derived)
	}
	if code, body := readyz(t, joiner); code == http.StatusOK || !strings.Contains(body, "has not named its history yet") {
		t.Errorf("/readyz of the joiner before the name applies: %d %s, want not ready, saying why", code, body)
	}
	w, err := joiner.client().Watch(ctx, &pb.WatchRequest{FromEpoch: proto.Uint64(1), HistoryId: derived})
	if err == nil {
		_, err = w.Recv()
	}
	if status.Code(err) != codes.Unavailable || !strings.Contains(status.Convert(err).Message(), "has not named its history yet") {
		t.Errorf("a watch naming the derived history id on the joiner before the name applies: %v, want Unavailable", err)
	}

	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	founder.waitReady()
	joiner.waitReady()
	c := &cluster{t: t, servers: []*server{founder, joiner}, names: []string{"n1", "n2"}}
	id := sharedIdentity(t, c)
	if id.history == derived {
		t.Fatalf("the named history has the derived id %s", derived)
	}
	joiner.stop()
	joiner.start()
	if got := identityOf(t, joiner); got != id {
		t.Errorf("the joiner after a restart answers %+v, want %+v", got, id)
	}
	if !historyNamed(t, joiner) {
		t.Error("the joiner does not say its cluster names its history")
	}
}
