package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

// node is one metalog serve process started by the benchmark.
type node struct {
	name                         string
	dir                          string
	grpcAddr, httpAddr, peerAddr string
	cqlAddr                      string   // the CQL listener's; "" for none
	env                          []string // added to the benchmark's environment
	observer                     bool     // added with cluster add --observer
	cmd                          *exec.Cmd
	log                          *os.File
	exited                       chan struct{}
}

// cluster is a set of nodes started with one --initial-cluster, and
// those added to it later.
type cluster struct {
	binary string
	dir    string   // the parent of the members' data dirs
	env    []string // added to every member's environment
	nodes  []*node
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// errPortTaken marks a member that could not bind a port freeAddr handed
// out, because another process took it in between.
var errPortTaken = errors.New("a port was taken before the member bound it")

// startCluster starts n members under dir, with env added to their
// environment, and waits until all are ready; with cql, each also serves
// the CQL native protocol on a port of its own (serve --cql-addr). When a
// member finds one of its ports taken in between (a busy machine), the
// cluster starts again, afresh, on other ports, up to three times.
func startCluster(ctx context.Context, binary, dir string, n int, extra, env []string, cql bool) (*cluster, error) {
	for attempt := 1; ; attempt++ {
		c, err := startClusterOnce(ctx, binary, dir, n, extra, env, cql)
		if err == nil || attempt == 3 || !errors.Is(err, errPortTaken) {
			return c, err
		}
		for i := range n {
			nd := filepath.Join(dir, fmt.Sprintf("n%d", i+1))
			os.RemoveAll(nd)
			os.Remove(nd + ".log")
		}
	}
}

// startClusterOnce is one attempt of startCluster.
func startClusterOnce(ctx context.Context, binary, dir string, n int, extra, env []string, cql bool) (*cluster, error) {
	c := &cluster{binary: binary, dir: dir, env: env}
	var ic []string
	for i := range n {
		nd := &node{name: fmt.Sprintf("n%d", i+1), dir: filepath.Join(dir, fmt.Sprintf("n%d", i+1)), env: env}
		for _, p := range []*string{&nd.grpcAddr, &nd.httpAddr, &nd.peerAddr, &nd.cqlAddr} {
			a, err := freeAddr()
			if err != nil {
				return nil, err
			}
			*p = a
		}
		c.nodes = append(c.nodes, nd)
		ic = append(ic, nd.name+"="+nd.peerAddr)
	}
	for _, nd := range c.nodes {
		args := append([]string{"--initial-cluster", strings.Join(ic, ",")}, extra...)
		if err := nd.start(binary, args); err != nil {
			c.stop()
			return nil, err
		}
	}
	for _, nd := range c.nodes {
		if err := nd.waitReady(ctx); err != nil {
			c.stop()
			return nil, err
		}
	}
	return c, nil
}

// addMember adds a member named name to c (an observer with observer)
// through cl, starts it beside the others, with their environment, with
// --join to joinAddr and extra, and waits until it is ready. The member
// is in c.nodes from the moment it is added, so that c.stop stops it.
func (c *cluster) addMember(ctx context.Context, cl *client.Client, name string, observer bool, joinAddr string, extra []string) (*node, error) {
	nd := &node{name: name, dir: filepath.Join(c.dir, name), env: c.env, observer: observer}
	for _, p := range []*string{&nd.grpcAddr, &nd.httpAddr, &nd.peerAddr, &nd.cqlAddr} {
		a, err := freeAddr()
		if err != nil {
			return nil, err
		}
		*p = a
	}
	if _, err := cl.AddMember(ctx, &pb.AddMemberRequest{Name: name, PeerAddr: nd.peerAddr, Observer: observer}); err != nil {
		return nil, fmt.Errorf("add member %s: %w", name, err)
	}
	c.nodes = append(c.nodes, nd)
	if err := nd.start(c.binary, append([]string{"--join", joinAddr}, extra...)); err != nil {
		return nil, err
	}
	return nd, nd.waitReady(ctx)
}

func (nd *node) start(binary string, extra []string) error {
	if err := os.MkdirAll(nd.dir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(nd.dir+".log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	// --cql-addr always, so that no member takes the default port (nor
	// finds it taken); extra may set it again.
	args := append([]string{"serve", "--name", nd.name, "--data-dir", nd.dir, "--grpc-addr", nd.grpcAddr,
		"--http-addr", nd.httpAddr, "--peer-addr", nd.peerAddr, "--cql-addr", nd.cqlAddr, "--log-level", "warn"}, extra...)
	nd.cmd = exec.Command(binary, args...)
	dieWithParent(nd.cmd)
	if len(nd.env) > 0 {
		nd.cmd.Env = append(os.Environ(), nd.env...)
	}
	nd.cmd.Stdout, nd.cmd.Stderr = f, f
	nd.log = f
	if err := nd.cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", nd.name, err)
	}
	nd.exited = make(chan struct{})
	cmd, exited := nd.cmd, nd.exited
	go func() { cmd.Wait(); close(exited) }()
	return nil
}

// waitReady polls /readyz until 200, the process exits, or ctx ends.
func (nd *node) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		select {
		case <-nd.exited:
			log, _ := os.ReadFile(nd.dir + ".log")
			if bytes.Contains(log, []byte("address already in use")) {
				return fmt.Errorf("%s: %w", nd.name, errPortTaken)
			}
			return fmt.Errorf("%s exited before it was ready (log: %s.log): %s", nd.name, nd.dir, lastLines(log, 5))
		default:
		}
		resp, err := http.Get("http://" + nd.httpAddr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w", nd.name, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stopNode sends SIGTERM (a drain) and waits, bounded, then SIGKILL.
func (nd *node) stopNode() {
	if nd.cmd == nil || nd.cmd.Process == nil {
		return
	}
	select {
	case <-nd.exited:
	default:
		nd.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-nd.exited:
		case <-time.After(20 * time.Second):
			nd.cmd.Process.Kill()
			<-nd.exited
		}
	}
	nd.log.Close()
}

func (c *cluster) stop() {
	for _, nd := range c.nodes {
		nd.stopNode()
	}
}

// targets returns the members the benchmark's clients go to,
// round-robin, for target (TablesOptions.Target).
func (c *cluster) targets(ctx context.Context, target string) ([]*node, error) {
	if target == TargetAll {
		return c.nodes, nil
	}
	leader, err := c.leader(ctx)
	if err != nil {
		return nil, err
	}
	var to []*node
	for _, nd := range c.nodes {
		if (nd == leader) == (target == TargetLeader) {
			to = append(to, nd)
		}
	}
	return to, nil
}

// leader returns the member whose metalog_raft_is_leader is 1, waiting
// (bounded) for one.
func (c *cluster) leader(ctx context.Context) (*node, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		for _, nd := range c.nodes {
			if v, err := nd.metric(ctx, "metalog_raft_is_leader"); err == nil && v == 1 {
				return nd, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("bench: no member reports itself leader: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// peakRSS reads a process's peak resident set size (VmHWM) in bytes.
func peakRSS(pid int) (int64, error) { return procStatusBytes(pid, "VmHWM") }

// currentRSS reads a process's resident set size now (VmRSS) in bytes.
func currentRSS(pid int) (int64, error) { return procStatusBytes(pid, "VmRSS") }

// procStatusBytes reads a size field ("NAME:   N kB") of
// /proc/PID/status, in bytes.
func procStatusBytes(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("%s not found in /proc/%d/status", field, pid)
}

// diskBytes counts the bytes allocated on disk under dir, as du does.
func diskBytes(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			total += st.Blocks * 512
		}
		return nil
	})
	return total, err
}

// metric scrapes the node's /metrics and returns the value of the
// sample name: a metric's name, with its labels as /metrics writes them
// when it has any.
func (nd *node) metric(ctx context.Context, name string) (uint64, error) {
	v, err := nd.metrics(ctx, name)
	if err != nil {
		return 0, err
	}
	return v[0], nil
}

// metrics is metric for several samples, read from one scrape, in the
// order of names.
func (nd *node) metrics(ctx context.Context, names ...string) ([]uint64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+nd.httpAddr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, found := make([]uint64, len(names)), make([]bool, len(names))
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		for i, name := range names {
			if rest, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
				v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
				if err != nil {
					return nil, fmt.Errorf("%s on %s: %w", name, nd.name, err)
				}
				out[i], found[i] = uint64(v), true
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for i, ok := range found {
		if !ok {
			return nil, fmt.Errorf("%s has no sample %s", nd.name, names[i])
		}
	}
	return out, nil
}

// waitApplied waits until nd has applied everything leader has and
// returns that index.
func (nd *node) waitApplied(ctx context.Context, leader *node) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	want, err := leader.metric(ctx, "metalog_raft_applied_index")
	if err != nil {
		return 0, err
	}
	for {
		got, err := nd.metric(ctx, "metalog_raft_applied_index")
		if err == nil && got >= want {
			return got, nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%s did not apply index %d: %w", nd.name, want, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// setupTimeout bounds, retries on Unavailable included, a benchmark's
// calls that carry no deadline of their own (setting guardrails, loading
// tables): as long as a timed DDL may take, three times the members'
// default request timeout.
const setupTimeout = 30 * time.Second

// connect returns a client of one member's client address, as metalog
// clients connect, with the TLS configuration and token of a secured
// cluster (nil and "" for plaintext without authentication).
func connect(addr string, tlsCfg *tls.Config, token string) (*client.Client, error) {
	return client.New(client.Config{Endpoints: []string{addr}, TLS: tlsCfg, Token: token, Timeout: setupTimeout})
}

// lastLines returns the last n lines of a log, for an error that must say
// why a member exited when its log may be gone with a temp dir.
func lastLines(log []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(log), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
