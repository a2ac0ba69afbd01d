package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

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
// fault a line, "isolate n1" or "partition n1 | n2 n3", empty for none.
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

// waitFaults waits until every running member logged content as the
// faults it now applies: the member polls the file, so the fault is in
// force from that line on.
func (c *cluster) waitFaults(content string) {
	c.t.Helper()
	const marker = `msg="peer faults changed"`
	want := "faults=" + strconv.Quote(strings.Join(strings.Fields(content), " "))
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

// Operations each step of the nemesis lets the clients complete.
const (
	// opsAround are the operations before the first fault and after the
	// last.
	opsAround = 40
	// opsDuring are the operations while a fault lasts, of which
	// writesDuring at least are writes with a known outcome: committed by
	// the side that has a quorum while the cut-off member is asked reads.
	opsDuring, writesDuring = 16, 12
)

// nemesis breaks a running cluster while schemaClients work on it, one
// fault after the other, each healed before the next.
type nemesis struct {
	t        *testing.T
	c        *cluster
	h        *schemaHistory
	faults   *faultFile
	cut      *atomic.Int32 // the clients' schemaClient.cut
	finished func() bool   // every client has returned
	// heals are the history times (schemaHistory.now) just before each
	// partition was healed, in order.
	heals []int64
}

// progress waits until the clients completed ops more operations, writes
// of them writes with a known outcome, and returns how many they did.
func (n *nemesis) progress(what string, ops, writes int) (doneOps, doneWrites int) {
	n.t.Helper()
	ops0, writes0 := n.h.counts()
	waitFor(n.t, 30*time.Second, what, func() error {
		doneOps, doneWrites = n.h.counts()
		doneOps, doneWrites = doneOps-ops0, doneWrites-writes0
		if doneOps >= ops && doneWrites >= writes {
			return nil
		}
		err := fmt.Errorf("%d operations (%d known writes) completed, want %d (%d)", doneOps, doneWrites, ops, writes)
		if n.finished() {
			n.t.Fatalf("the clients stopped (operation cap or deadline) before %s: %v", what, err)
		}
		return err
	})
	return doneOps, doneWrites
}

// partition cuts member alone off from the others with fault (a line of
// the fault file), lets the clients work while it lasts, heals it and
// waits until member is ready again.
func (n *nemesis) partition(what string, member int, fault string) {
	n.t.Helper()
	n.faults.set(fault)
	n.c.waitFaults(fault)
	n.cut.Store(int32(member) + 1)
	ops, writes := n.progress("operations while "+what, opsDuring, writesDuring)
	var others []int
	for i := range n.c.servers {
		if i != member {
			others = append(others, i)
		}
	}
	leader := n.c.leader(others...)
	n.cut.Store(0)
	n.heals = append(n.heals, n.h.now())
	n.faults.set("")
	n.c.waitFaults("")
	n.c.servers[member].waitReady()
	n.c.agreedLeader()
	n.t.Logf("%s (%q): %s led while %d operations completed (%d known writes); healed", what, fault, n.c.names[leader], ops, writes)
}

// isolateLeader cuts the leader off from both followers.
func (n *nemesis) isolateLeader() {
	n.t.Helper()
	leader := n.c.agreedLeader()
	n.partition("leader "+n.c.names[leader]+" isolated", leader, "isolate "+n.c.names[leader])
}

// splitFollower splits the cluster 1|2: a follower alone, the leader and
// the other follower together.
func (n *nemesis) splitFollower() {
	n.t.Helper()
	leader := n.c.agreedLeader()
	alone := (leader + 1 + rand.IntN(len(n.c.servers)-1)) % len(n.c.servers)
	var rest []string
	for i, name := range n.c.names {
		if i != alone {
			rest = append(rest, name)
		}
	}
	n.partition("follower "+n.c.names[alone]+" split off", alone,
		"partition "+n.c.names[alone]+" | "+strings.Join(rest, " "))
}

// killLeader kills the leader with SIGKILL, lets the clients work against
// the two survivors, and restarts it with whatever uncommitted entries it
// had.
func (n *nemesis) killLeader() {
	n.t.Helper()
	leader := n.c.agreedLeader()
	n.c.servers[leader].kill()
	newLeader := n.c.leader()
	ops, _ := n.progress("operations while the old leader is down", opsDuring, 0)
	n.c.servers[leader].start()
	n.t.Logf("leader %s killed: %s led while %d operations completed; restarted", n.c.names[leader], n.c.names[newLeader], ops)
}

// Bounds of the clients of runSchemaHistory: the nemesis normally ends
// long before either, and a run that reaches one fails.
const (
	schemaClients   = 8
	opsPerClientCap = 300
	clientsDeadline = 60 * time.Second
)

// schemaRun is what runSchemaHistory returns.
type schemaRun struct {
	ops     []porcupine.Operation // the history
	unknown int                   // writes in ops of unknown outcome
	heals   []int64               // nemesis.heals
}

// runSchemaHistory starts a 3-member cluster of the metalog binary built
// with tags (which must include faultsTags), runs schemaClients clients
// against it under the nemesis (the leader isolated, a follower split off,
// the leader killed and restarted; each fault healed before the next),
// waits until the members agree, and returns the history.
func runSchemaHistory(t *testing.T, tags string) *schemaRun {
	t.Helper()
	bin := taggedBinary(t, tags)
	ff := newFaultFile(t)
	c := newClusterOf(t, 3, func(s *server) { s.bin, s.env = bin, []string{ff.env()} })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.servers[0].client().Execute(ctx, &pb.ExecuteRequest{Statements: ksRF3, RequestId: "lin-ks"}); err != nil {
		t.Fatal(err)
	}
	c.waitSameDigest()

	members := make([]pb.MetadataServiceClient, len(c.servers))
	for i, s := range c.servers {
		members[i] = s.client()
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	h := newSchemaHistory()
	var nextID atomic.Int64
	nextID.Store(schemaClients)
	var finished atomic.Int64
	var cut atomic.Int32
	var stop atomic.Bool
	deadline := time.Now().Add(clientsDeadline)
	var wg sync.WaitGroup
	// Deferred in this order so that a t.Fatal below cancels the clients
	// before waiting for them.
	defer wg.Wait()
	cctx, stopClients := context.WithCancel(ctx)
	defer stopClients()
	for w := range schemaClients {
		cl := &schemaClient{t: t, h: h, members: members, nextID: &nextID, cut: &cut, stop: &stop,
			rng: rand.New(rand.NewPCG(seed, uint64(w))), name: fmt.Sprintf("lin-%d-c%d", seed, w)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer finished.Add(1)
			cl.run(cctx, w, opsPerClientCap, deadline)
		}()
	}
	n := &nemesis{t: t, c: c, h: h, faults: ff, cut: &cut,
		finished: func() bool { return finished.Load() == schemaClients }}
	n.progress("operations before the nemesis", opsAround, 0)
	n.isolateLeader()
	n.splitFollower()
	n.killLeader()
	n.progress("operations after the nemesis", opsAround, 0)
	stop.Store(true)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	c.waitSameDigest()

	h.mu.Lock()
	defer h.mu.Unlock()
	if known, least := len(h.ops)-h.unknown, 2*opsAround+3*opsDuring; known < least {
		t.Fatalf("only %d operations of %d have a known outcome, fewer than the %d the nemesis waited for: too little to check", known, len(h.ops), least)
	}
	t.Logf("%d operations recorded, %d writes known, %d unknown, %d failed reads dropped, %d reads answered by a cut-off member; error codes %v",
		len(h.ops), h.writes, h.unknown, h.dropped, countCutOffReads(h.ops), h.codes)
	return &schemaRun{ops: h.ops, unknown: h.unknown, heals: n.heals}
}

// countCutOffReads is the number of reads in ops sent to a member while a
// partition cut it off. A correct member answers only those that outlast
// the partition; the others fail, and are not in ops.
func countCutOffReads(ops []porcupine.Operation) int {
	n := 0
	for _, op := range ops {
		if op.Input.(schemaInput).cutOff {
			n++
		}
	}
	return n
}

// answeredWhileCutOff returns the reads sent to a cut-off member that it
// answered before the partition healed. A correct member answers none: it
// cannot confirm a read with a quorum before the fault file heals it, and
// the heal time is taken before the file is written.
func (r *schemaRun) answeredWhileCutOff() []porcupine.Operation {
	var early []porcupine.Operation
	for _, op := range r.ops {
		if !op.Input.(schemaInput).cutOff {
			continue
		}
		// The partition the read was sent in is the first one healed after
		// the read was called.
		if i := slices.IndexFunc(r.heals, func(heal int64) bool { return heal > op.Call }); i >= 0 && op.Return < r.heals[i] {
			early = append(early, op)
		}
	}
	return early
}
