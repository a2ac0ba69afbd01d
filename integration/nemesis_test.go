package integration

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// faultsTags are the build tags of a metalog binary whose peer transport
// obeys a fault file (member/faulthook.go); production builds have none.
const faultsTags = "metalog_faults"

// peerFaultsFileEnv is the environment variable that names the fault file
// of a faultsTags build (member.PeerFaultsFileEnv, which only exists in
// such a build).
const peerFaultsFileEnv = "METALOG_PEER_FAULTS_FILE"

// faultFile is the fault file every process of a test cluster obeys: one
// fault a line ("isolate n1", "partition n1 | n2 n3", "drop n1 n2",
// "delay n1 n2 200ms"), empty for none.
type faultFile struct {
	t    *testing.T
	path string
}

// newFaultFile names a fault file in a temporary directory; until set
// writes it, it does not exist, which means no faults.
func newFaultFile(t *testing.T) *faultFile {
	return &faultFile{t: t, path: filepath.Join(t.TempDir(), "peer-faults")}
}

// env is the environment variable that points a process at the file.
func (f *faultFile) env() string { return peerFaultsFileEnv + "=" + f.path }

// set replaces the file's content by writing a temporary file and renaming
// it over the old one, so that no process reads half of it.
func (f *faultFile) set(content string) {
	f.t.Helper()
	tmp := f.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Rename(tmp, f.path); err != nil {
		f.t.Fatal(err)
	}
}

// describeFaultLines renders a fault file's content as a member logs it:
// its faults with single spaces, separated by "; ".
func describeFaultLines(content string) string {
	var lines []string
	for line := range strings.Lines(content) {
		if f := strings.Fields(line); len(f) > 0 {
			lines = append(lines, strings.Join(f, " "))
		}
	}
	return strings.Join(lines, "; ")
}

// waitFaults waits until every running member logged content as the
// faults it now applies: the member polls the file, so the fault is in
// force from that line on.
func (c *cluster) waitFaults(content string) {
	c.t.Helper()
	const marker = `msg="peer faults changed"`
	want := "faults=" + strconv.Quote(describeFaultLines(content))
	waitFor(c.t, 10*time.Second, "the members to apply the faults "+strconv.Quote(content), func() error {
		for i, s := range c.servers {
			if !s.running() {
				continue
			}
			out := s.stderr.String()
			at := strings.LastIndex(out, marker)
			if at < 0 {
				return fmt.Errorf("%s logged no faults yet", c.names[i])
			}
			line, _, _ := strings.Cut(out[at:], "\n")
			if !strings.Contains(line, want) {
				return fmt.Errorf("%s applies other faults: %s", c.names[i], line)
			}
		}
		return nil
	})
}

// Flags of TestNemesis, for runs longer than CI's (see README,
// Contributing).
var (
	nemesisDuration = flag.Duration("nemesis.duration", 0,
		"how long TestNemesis goes on starting faults (0: "+envNemesisDuration+", else 90s, or 30s with -short); every kind of fault runs at least once")
	nemesisSeed    = flag.Uint64("nemesis.seed", 0, "the seed of TestNemesis's schedule and clients (0: from the clock; the seed is logged)")
	nemesisMembers = flag.Int("nemesis.members", 3, "how many member processes TestNemesis runs (3 to 5)")
	nemesisFaults  = flag.String("nemesis.faults", "", "the kinds of fault TestNemesis uses, comma separated (empty: all of "+strings.Join(allFaultKinds, ",")+")")
)

// envNemesisDuration is the environment variable that sets TestNemesis's
// duration when -nemesis.duration does not (a Go duration, "30m").
const envNemesisDuration = "METALOG_NEMESIS_DURATION"

// The kinds of fault of the nemesis.
const (
	faultKill      = "kill"      // kill -9 of a member (the leader half the time), then a restart
	faultStop      = "stop"      // SIGSTOP of the leader until another is elected and the clients progress, then SIGCONT
	faultReadd     = "readd"     // cluster remove, then cluster add and serve --join of the same name on a fresh data dir
	faultDrop      = "drop"      // the messages from one member to another dropped (one way or both)
	faultDelay     = "delay"     // the messages from one member to another delayed (one way or both)
	faultIsolate   = "isolate"   // the leader cut off from every other member
	faultPartition = "partition" // a follower split off alone
)

// allFaultKinds lists every kind of fault.
var allFaultKinds = []string{faultKill, faultStop, faultReadd, faultDrop, faultDelay, faultIsolate, faultPartition}

// Operations each step of the nemesis lets the clients complete.
const (
	// opsAround are the operations before the first fault and after the
	// last.
	opsAround = 40
	// opsDuring are the operations while a fault lasts, of which
	// writesDuring at least are writes with a known outcome: committed by
	// the side that has a quorum while the cut-off member is asked reads.
	opsDuring, writesDuring = 16, 12
	// opsBetween and writesBetween are what the clients complete after a
	// fault healed, before the next one starts.
	opsBetween, writesBetween = 8, 4
)

// nemesisClients is how many clients write and read during a run.
const nemesisClients = 8

// nemesisConfig is what runNemesis runs.
type nemesisConfig struct {
	tags     string        // the build tags of the members' binary (faultsTags at least)
	members  int           // member processes, 3 to 5
	duration time.Duration // faults start until then; one round of every kind at least
	kinds    []string      // the kinds of fault used
	seed     uint64        // 0: from the clock
}

// nemesis breaks a running cluster while nemesisClients clients work on
// it, one fault after the other, each healed before the next. Its fault
// methods return an error when a promise broke in a way that ends the
// schedule (a member that does not come back, a cluster that makes no
// progress); the checks after the schedule still run.
type nemesis struct {
	t        *testing.T
	c        *cluster
	rng      *rand.Rand
	faults   *faultFile
	log      *opLog
	tg       *targets
	finished func() bool // every client has returned
	// heals are the times (opLog.now) just before each partition was
	// healed, in order.
	heals []int64
	// done counts the faults made, by kind.
	done map[string]int
}

// errNoProgress is wrapped by the error of a schedule step that waited
// in vain for the clients to complete operations.
var errNoProgress = errors.New("the clients made no progress")

// progress waits until the clients completed ops more operations with an
// answer that means something, writes of them writes with a known
// outcome, and returns how many they did.
func (n *nemesis) progress(what string, ops, writes int) (doneOps, doneWrites int, err error) {
	ops0, writes0 := n.log.counts()
	err = pollUntil(45*time.Second, func() error {
		doneOps, doneWrites = n.log.counts()
		doneOps, doneWrites = doneOps-ops0, doneWrites-writes0
		if doneOps >= ops && doneWrites >= writes {
			return nil
		}
		err := fmt.Errorf("%d operations (%d known writes) completed, want %d (%d)", doneOps, doneWrites, ops, writes)
		if n.finished() {
			n.t.Fatalf("the clients stopped (deadline) before %s: %v", what, err)
		}
		return err
	})
	if err != nil {
		return doneOps, doneWrites, fmt.Errorf("%w %s: %w", errNoProgress, what, err)
	}
	return doneOps, doneWrites, nil
}

// pollUntil polls cond until it returns nil or limit passes, and returns
// its last error then.
func pollUntil(limit time.Duration, cond func() error) error {
	deadline := time.Now().Add(limit)
	for {
		err := cond()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// setDown marks member i as down (killed, stopped, removed) or up again
// for the clients.
func (n *nemesis) setDown(i int, down bool) {
	for {
		old := n.tg.down.Load()
		next := old &^ (1 << i)
		if down {
			next = old | 1<<i
		}
		if n.tg.down.CompareAndSwap(old, next) {
			return
		}
	}
}

// others returns the indexes of every member but i.
func (n *nemesis) others(i int) []int {
	var o []int
	for j := range n.c.servers {
		if j != i {
			o = append(o, j)
		}
	}
	return o
}

// other returns a random member other than i.
func (n *nemesis) other(i int) int {
	o := n.others(i)
	return o[n.rng.IntN(len(o))]
}

// leader returns the index of a member of among that says it leads. It
// gives ListMembers more time than cluster.leader does: a member asks
// every other for its status, and one stopped with SIGSTOP answers only
// when its status call times out (2 s).
func (n *nemesis) leader(among []int) int {
	n.t.Helper()
	var idx int
	waitFor(n.t, 30*time.Second, "a leader among the members up", func() error {
		for _, i := range among {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			resp, err := n.c.servers[i].client().ListMembers(ctx, &pb.ListMembersRequest{})
			cancel()
			if err != nil {
				continue
			}
			for _, m := range resp.Members {
				if m.Leader && m.Name == n.c.names[i] {
					idx = i
					return nil
				}
			}
		}
		return errors.New("no member says it leads")
	})
	return idx
}

// victim returns the leader half the time, a random follower otherwise,
// and says which.
func (n *nemesis) victim() (int, string) {
	leader := n.c.agreedLeader()
	if n.rng.IntN(2) == 0 {
		return leader, "leader"
	}
	return n.other(leader), "follower"
}

// tail is the last lines of a process's stderr, for evidence.
func tail(s *server, lines int) string {
	all := strings.Split(strings.TrimRight(s.stderr.String(), "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// notReady says why a member that should be ready is not: the end of its
// stderr if its process exited, else err.
func notReady(s *server, err error) string {
	if !s.running() {
		return fmt.Sprintf("its process exited (%v):\n%s", s.cmd.ProcessState, tail(s, 8))
	}
	return err.Error()
}

// partition cuts member alone off from the others with fault (fault file
// content), lets the clients work while it lasts (sending half their
// reads to it), heals it and waits until member is ready again.
func (n *nemesis) partition(what string, member int, fault string) error {
	n.faults.set(fault)
	n.c.waitFaults(fault)
	n.tg.cut.Store(int32(member) + 1)
	ops, writes, err := n.progress("operations while "+what, opsDuring, writesDuring)
	leader := -1
	if err == nil {
		leader = n.leader(n.others(member))
	}
	n.tg.cut.Store(0)
	n.heals = append(n.heals, n.log.now())
	n.faults.set("")
	n.c.waitFaults("")
	if err != nil {
		return err
	}
	if err := n.c.servers[member].readyErr(30 * time.Second); err != nil {
		return fmt.Errorf("%s: %s is not ready after the partition healed: %s", what, n.c.names[member], notReady(n.c.servers[member], err))
	}
	n.t.Logf("%s (%q): %s led while %d operations completed (%d known writes); healed", what, fault, n.c.names[leader], ops, writes)
	return nil
}

// isolateLeader cuts the leader off from every other member.
func (n *nemesis) isolateLeader() error {
	leader := n.c.agreedLeader()
	return n.partition("leader "+n.c.names[leader]+" isolated", leader, "isolate "+n.c.names[leader])
}

// splitFollower splits a follower off alone; the leader keeps the others.
func (n *nemesis) splitFollower() error {
	alone := n.other(n.c.agreedLeader())
	var rest []string
	for _, i := range n.others(alone) {
		rest = append(rest, n.c.names[i])
	}
	return n.partition("follower "+n.c.names[alone]+" split off", alone,
		"partition "+n.c.names[alone]+" | "+strings.Join(rest, " "))
}

// breakLink drops (verb "drop") or delays (verb "delay", by a random
// 50-300 ms) the messages from one random member to another, one way or
// both, while the clients progress, then heals it.
func (n *nemesis) breakLink(verb string) error {
	a := n.rng.IntN(len(n.c.servers))
	b := n.other(a)
	arg := ""
	if verb == faultDelay {
		arg = fmt.Sprintf(" %dms", 50+n.rng.IntN(251))
	}
	fault := fmt.Sprintf("%s %s %s%s\n", verb, n.c.names[a], n.c.names[b], arg)
	if n.rng.IntN(2) == 0 {
		fault += fmt.Sprintf("%s %s %s%s\n", verb, n.c.names[b], n.c.names[a], arg)
	}
	n.faults.set(fault)
	n.c.waitFaults(fault)
	ops, writes, err := n.progress("operations while "+describeFaultLines(fault), opsDuring, writesDuring)
	n.faults.set("")
	n.c.waitFaults("")
	if err != nil {
		return err
	}
	n.t.Logf("%q: %d operations completed (%d known writes); healed", describeFaultLines(fault), ops, writes)
	return nil
}

// kill kills a member (the leader half the time) with SIGKILL, lets the
// clients work against the others, and restarts it on its data dir.
func (n *nemesis) kill() error {
	victim, role := n.victim()
	s, name := n.c.servers[victim], n.c.names[victim]
	n.setDown(victim, true)
	s.kill()
	leader := n.leader(n.others(victim))
	ops, writes, err := n.progress("operations while "+name+" is killed", opsDuring, writesDuring)
	if err != nil {
		return err
	}
	s.startAsync()
	if err := s.readyErr(60 * time.Second); err != nil {
		return fmt.Errorf("%s (%s) killed with SIGKILL and started again on its data dir is not ready: %s", name, role, notReady(s, err))
	}
	if err := n.tg.follow(victim, s.grpcAddr); err != nil {
		return err
	}
	n.setDown(victim, false)
	n.t.Logf("%s %s killed: %s led while %d operations completed (%d known writes); restarted", role, name, n.c.names[leader], ops, writes)
	return nil
}

// stopLeader freezes the leader with SIGSTOP until the others elected
// another (an election timeout, about 1 s, at least) and the clients
// progressed, then lets it go on with SIGCONT: it wakes up believing it
// leads in its old term.
func (n *nemesis) stopLeader() error {
	leader := n.c.agreedLeader()
	s, name := n.c.servers[leader], n.c.names[leader]
	n.setDown(leader, true)
	if err := syscall.Kill(s.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		n.t.Fatal(err)
	}
	next := n.leader(n.others(leader))
	ops, writes, err := n.progress("operations while the leader "+name+" is stopped", opsDuring, writesDuring)
	if err := syscall.Kill(s.cmd.Process.Pid, syscall.SIGCONT); err != nil {
		n.t.Fatal(err)
	}
	if err != nil {
		return err
	}
	if err := s.readyErr(30 * time.Second); err != nil {
		return fmt.Errorf("the leader %s stopped with SIGSTOP is not ready after SIGCONT: %s", name, notReady(s, err))
	}
	n.setDown(leader, false)
	n.t.Logf("leader %s stopped: %s led while %d operations completed (%d known writes); continued", name, n.c.names[next], ops, writes)
	return nil
}

// readd removes a member (the leader half the time) with `cluster remove`
// and, once it stopped by itself, adds it back under the same name with
// `cluster add`, and starts it on a fresh data dir with --join, as the
// README says to rebuild a member; it must join, catch up and become a
// voter.
func (n *nemesis) readd() error {
	victim, role := n.victim()
	s, name := n.c.servers[victim], n.c.names[victim]
	via := n.c.servers[n.other(victim)]
	n.setDown(victim, true)
	if out, stderr, rc := via.cli("cluster", "remove", name); rc != 0 {
		return fmt.Errorf("cluster remove %s (%s): exit %d: %s%s", name, role, rc, out, stderr)
	}
	select {
	case <-s.exited:
		if code := s.cmd.ProcessState.ExitCode(); code != 0 {
			return fmt.Errorf("%s removed exited with status %d, want 0:\n%s", name, code, tail(s, 8))
		}
	case <-time.After(30 * time.Second):
		return fmt.Errorf("%s removed still runs 30s later:\n%s", name, tail(s, 8))
	}
	leader := n.leader(n.others(victim))
	ops, writes, err := n.progress("operations while "+name+" is removed", opsDuring/2, writesDuring/2)
	if err != nil {
		return err
	}
	if out, stderr, rc := via.cli("cluster", "add", "--name", name, "--peer-addr", s.peers); rc != 0 {
		return fmt.Errorf("cluster add %s again after its removal: exit %d: %s%s", name, rc, out, stderr)
	}
	s.dir = filepath.Join(n.t.TempDir(), "data")
	s.args = []string{"--name", name, "--join", via.grpcAddr}
	s.startAsync()
	if err := s.readyErr(60 * time.Second); err != nil {
		return fmt.Errorf("%s removed, added again under the same name and started on a fresh data dir with --join is not ready: %s", name, notReady(s, err))
	}
	if err := n.tg.follow(victim, s.grpcAddr); err != nil {
		return err
	}
	if err := n.waitVoter(name); err != nil {
		return err
	}
	n.setDown(victim, false)
	n.t.Logf("%s %s removed (%s led while %d operations completed, %d known writes), added again and joined on a fresh data dir", role, name, n.c.names[leader], ops, writes)
	return nil
}

// waitVoter waits until every running member lists name as a voter it can
// reach.
func (n *nemesis) waitVoter(name string) error {
	return pollUntil(60*time.Second, func() error {
		for i, s := range n.c.servers {
			if !s.running() {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			r, err := s.client().ListMembers(ctx, &pb.ListMembersRequest{})
			cancel()
			if err != nil {
				return fmt.Errorf("%s: %w", n.c.names[i], err)
			}
			j := slices.IndexFunc(r.Members, func(m *pb.Member) bool { return m.Name == name })
			if j < 0 || r.Members[j].Role != "voter" || !r.Members[j].Reachable {
				return fmt.Errorf("%s re-added is not a voter %s can reach: %v", name, n.c.names[i], r.Members)
			}
		}
		return nil
	})
}

// settle waits until every member runs, answers and agrees on a leader,
// and the clients progress a little: the cluster is whole again before
// the next fault.
func (n *nemesis) settle(after string) error {
	for i, s := range n.c.servers {
		if !s.running() {
			return fmt.Errorf("after %s, %s does not run:\n%s", after, n.c.names[i], tail(s, 10))
		}
		if err := s.readyErr(30 * time.Second); err != nil {
			return fmt.Errorf("after %s, %s is not ready: %s", after, n.c.names[i], notReady(s, err))
		}
	}
	n.c.agreedLeader()
	_, _, err := n.progress("operations after "+after, opsBetween, writesBetween)
	return err
}

// do makes one fault of kind.
func (n *nemesis) do(kind string) error {
	n.done[kind]++
	switch kind {
	case faultKill:
		return n.kill()
	case faultStop:
		return n.stopLeader()
	case faultReadd:
		return n.readd()
	case faultDrop, faultDelay:
		return n.breakLink(kind)
	case faultIsolate:
		return n.isolateLeader()
	case faultPartition:
		return n.splitFollower()
	}
	n.t.Fatalf("unknown fault kind %q, want one of %v", kind, allFaultKinds)
	return nil
}

// schedule makes faults in rounds, each round every kind in a random
// order, each healed before the next, until duration has passed since
// start (the first round always completes). It stops at the first error.
func (n *nemesis) schedule(kinds []string, start time.Time, duration time.Duration) error {
	for round := 0; ; round++ {
		order := slices.Clone(kinds)
		n.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, kind := range order {
			if round > 0 && time.Since(start) >= duration {
				return nil
			}
			if err := n.do(kind); err != nil {
				return fmt.Errorf("fault %s (number %d of the run): %w", kind, n.total(), err)
			}
			if err := n.settle("fault " + kind); err != nil {
				return err
			}
		}
	}
}

// total is the number of faults made.
func (n *nemesis) total() int {
	sum := 0
	for _, c := range n.done {
		sum += c
	}
	return sum
}

// nemesisRun is what runNemesis returns: the cluster healed and quiet, the
// operations, and what the members hold.
type nemesisRun struct {
	c     *cluster
	seed  uint64
	ops   []*opRecord
	heals []int64
	done  map[string]int
	// broken is the error that ended the schedule early, nil if it ran
	// to the end.
	broken error
	end    *clusterEnd
}

// runNemesis starts cfg.members processes of the metalog binary built
// with cfg.tags, runs nemesisClients clients against them while the
// nemesis makes faults of cfg.kinds, heals everything, stops the clients,
// and gathers what every member holds.
func runNemesis(t *testing.T, cfg nemesisConfig) *nemesisRun {
	t.Helper()
	if cfg.seed == 0 {
		cfg.seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-nemesis.seed=%d replays the schedule's choices), %d members, faults %v, duration %v", cfg.seed, cfg.seed, cfg.members, cfg.kinds, cfg.duration)
	bin := taggedBinary(t, cfg.tags)
	ff := newFaultFile(t)
	c := newClusterOf(t, cfg.members, func(s *server) { s.bin, s.env = bin, []string{ff.env()} })
	ctx, cancel := context.WithTimeout(context.Background(), cfg.duration+10*time.Minute)
	defer cancel()
	ks := ksRF3 + "; " + strings.Replace(ksRF3, "KEYSPACE ks", "KEYSPACE u", 1)
	if _, err := c.servers[0].client().Execute(ctx, &pb.ExecuteRequest{Statements: ks, RequestId: "nemesis-keyspaces"}); err != nil {
		t.Fatal(err)
	}
	c.waitSameDigest()

	tg, err := newTargets(c)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.close()
	log := newOpLog()
	var stop atomic.Bool
	var finished atomic.Int64
	var wg sync.WaitGroup
	// Deferred in this order so that a t.Fatal below stops the clients
	// before waiting for them.
	defer wg.Wait()
	cctx, stopClients := context.WithCancel(ctx)
	defer stopClients()
	deadline := time.Now().Add(cfg.duration + 5*time.Minute)
	for w := range nemesisClients {
		cl := &nemesisClient{worker: w, log: log, tg: tg, rng: rand.New(rand.NewPCG(cfg.seed, uint64(w)+1)),
			prefix: fmt.Sprintf("nem-%d-c%d", cfg.seed, w)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer finished.Add(1)
			cl.run(cctx, &stop, deadline)
		}()
	}
	n := &nemesis{t: t, c: c, rng: rand.New(rand.NewPCG(cfg.seed, 0)), faults: ff, log: log, tg: tg, done: map[string]int{},
		finished: func() bool { return finished.Load() == nemesisClients }}
	run := &nemesisRun{c: c, seed: cfg.seed, done: n.done}
	_, _, run.broken = n.progress("operations before the nemesis", opsAround, 0)
	if run.broken == nil {
		run.broken = n.schedule(cfg.kinds, time.Now(), cfg.duration)
	}
	if run.broken == nil {
		_, _, run.broken = n.progress("operations after the nemesis", opsAround, 0)
	}
	n.healAll()
	stop.Store(true)
	wg.Wait()
	run.ops, run.heals = log.snapshot(), n.heals
	if run.broken != nil {
		logEvidence(t, c, run.ops)
	}
	run.end = gatherEnd(t, c, tg)
	return run
}

// logEvidence logs, for a schedule that ended early, the last failed
// operations and the last lines of every member's log: what the clients
// were told, and what the members did meanwhile.
func logEvidence(t *testing.T, c *cluster, ops []*opRecord) {
	t.Helper()
	var failed []string
	for _, r := range ops {
		if r.failed {
			failed = append(failed, fmt.Sprintf("client %d, %s to %s: %v %s (%s)", r.worker, r.statement(), c.names[r.member], r.code, r.msg, r.reason))
		}
	}
	t.Logf("the last failed operations of %d:\n%s", len(failed), strings.Join(failed[max(0, len(failed)-12):], "\n"))
	for i, s := range c.servers {
		t.Logf("%s's last log lines:\n%s", c.names[i], tail(s, 40))
	}
}

// healAll ends every fault that may still be in force after a schedule
// that ended early: no faults in the file, no process stopped.
func (n *nemesis) healAll() {
	n.tg.cut.Store(0)
	n.faults.set("")
	for _, s := range n.c.servers {
		if s.running() {
			syscall.Kill(s.cmd.Process.Pid, syscall.SIGCONT)
		}
	}
	n.c.waitFaults("")
	n.tg.down.Store(0)
}

// nemesisSettings returns TestNemesis's configuration from its flags and
// the environment.
func nemesisSettings(t *testing.T) nemesisConfig {
	cfg := nemesisConfig{tags: faultsTags, members: *nemesisMembers, duration: *nemesisDuration, kinds: allFaultKinds, seed: *nemesisSeed}
	if cfg.members < 3 || cfg.members > 5 {
		t.Fatalf("-nemesis.members=%d: want 3 to 5", cfg.members)
	}
	if env := os.Getenv(envNemesisDuration); cfg.duration == 0 && env != "" {
		d, err := time.ParseDuration(env)
		if err != nil {
			t.Fatalf("%s=%q: want a duration such as 30m: %v", envNemesisDuration, env, err)
		}
		cfg.duration = d
	}
	switch {
	case cfg.duration > 0:
	case testing.Short():
		cfg.duration = 30 * time.Second
	default:
		cfg.duration = 90 * time.Second
	}
	if *nemesisFaults != "" {
		cfg.kinds = strings.Split(*nemesisFaults, ",")
		for _, k := range cfg.kinds {
			if !slices.Contains(allFaultKinds, k) {
				t.Fatalf("-nemesis.faults: unknown kind %q, want some of %s", k, strings.Join(allFaultKinds, ","))
			}
		}
	}
	return cfg
}

// TestNemesis runs nemesisClients clients that write (tables created and
// dropped with IF [NOT] EXISTS, tables of their own created) and read
// linearizably through every member of a cluster of real processes, while
// a seeded random schedule kills members with SIGKILL, freezes the leader
// with SIGSTOP, removes a member and adds it back under the same name on a
// fresh data dir, drops and delays the messages between two members, cuts
// the leader off and splits a follower off, each fault healed before the
// next. It then checks the promises: the history is linearizable, every
// acknowledged change is on every member (at the epoch its answer gave),
// every change answered as refused is on none, no member answered a
// linearizable read while cut off, and every member is a voter that
// answers, as `cluster check` agrees.
func TestNemesis(t *testing.T) {
	run := runNemesis(t, nemesisSettings(t))
	run.check(t)
}
