package integration

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// binary is the metalog binary built once by TestMain, in binDir.
var binary string

// binDir is the temporary directory of the binaries the tests build.
var binDir string

func TestMain(m *testing.M) {
	var err error
	if binDir, err = os.MkdirTemp("", "metalog-integration-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(binDir, "metalog")
	if err := buildBinary(binary, ""); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(binDir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(binDir)
	os.Exit(code)
}

// buildBinary builds cmd/metalog into path with the build tags (a comma
// separated list, "" for none), bounded in time.
func buildBinary(path, tags string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-tags", tags, "-o", path, "../cmd/metalog")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building metalog (tags %q): %v\n%s", tags, err, out)
	}
	return nil
}

// taggedBuilds are the binaries built with build tags, by tag list, each
// once per test process.
var taggedBuilds struct {
	mu     sync.Mutex // guards builds
	builds map[string]*taggedBuild
}

// taggedBuild is one binary built with build tags.
type taggedBuild struct {
	once sync.Once
	path string
	err  error
}

// taggedBinary returns the metalog binary built with tags (a comma
// separated list, such as "metalog_faults"), building it into binDir the
// first time it is asked for.
func taggedBinary(t *testing.T, tags string) string {
	t.Helper()
	taggedBuilds.mu.Lock()
	if taggedBuilds.builds == nil {
		taggedBuilds.builds = map[string]*taggedBuild{}
	}
	b := taggedBuilds.builds[tags]
	if b == nil {
		b = &taggedBuild{path: filepath.Join(binDir, "metalog-"+strings.ReplaceAll(tags, ",", "-"))}
		taggedBuilds.builds[tags] = b
	}
	taggedBuilds.mu.Unlock()
	b.once.Do(func() { b.err = buildBinary(b.path, tags) })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// freeAddr returns a loopback address with a port that was free a moment
// ago, below the kernel's ephemeral range and never handed out before in
// this test binary: a port from that range may be taken by any outgoing
// connection (the members' own status calls among them) before the
// server binds it, and a member keeps its peer address across restarts
// and from `cluster add` to its start, where no other port will do.
func freeAddr(t *testing.T) string {
	t.Helper()
	low := ephemeralLow()
	for range 1000 {
		port := minTestPort + rand.IntN(low-minTestPort)
		if !handOut(port) {
			continue
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		l.Close()
		return addr
	}
	t.Fatal("no free loopback port below the ephemeral range after 1000 tries")
	return ""
}

// minTestPort is the lowest port freeAddr hands out.
const minTestPort = 10000

// handedOut are the ports freeAddr returned, which it returns only once.
var handedOut struct {
	sync.Mutex
	ports map[int]bool
}

// handOut reports whether port is new to freeAddr, marking it handed out.
func handOut(port int) bool {
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports == nil {
		handedOut.ports = map[int]bool{}
	}
	if handedOut.ports[port] {
		return false
	}
	handedOut.ports[port] = true
	return true
}

// ephemeralLow is the lowest port of the kernel's ephemeral range (Linux's
// ip_local_port_range; 32768, its default, elsewhere or when unreadable).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n <= minTestPort+1000 {
		return 32768
	}
	return n
}

// server is one metalog serve process.
type server struct {
	t                         *testing.T
	dir                       string
	grpcAddr, httpAddr, peers string
	cqlAddr                   string   // the CQL listener's (cqlArgs)
	args                      []string // extra serve arguments
	bin                       string   // the binary to run; "" for binary
	env                       []string // extra environment variables, KEY=value
	conn                      *grpc.ClientConn
	cmd                       *exec.Cmd
	stderr                    *syncBuffer
	exited                    chan struct{}
}

// syncBuffer is a bytes.Buffer safe for the process's writer goroutine and
// the test reading it.
type syncBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newServer prepares a server with fresh loopback ports in a temp dir.
func newServer(t *testing.T) *server {
	return &server{t: t, dir: filepath.Join(t.TempDir(), "data"),
		grpcAddr: freeAddr(t), httpAddr: freeAddr(t), peers: freeAddr(t), cqlAddr: freeAddr(t)}
}

// serveArgs is the `metalog serve` command line of s: its data dir and
// addresses, then its extra arguments (which win over them).
func (s *server) serveArgs() []string {
	args := []string{"serve", "--data-dir", s.dir, "--grpc-addr", s.grpcAddr,
		"--http-addr", s.httpAddr, "--peer-addr", s.peers}
	args = append(args, s.cqlArgs()...)
	return append(args, s.args...)
}

// cqlArgs keeps every process off the default CQL port, which another
// process may hold: --cql-addr s.cqlAddr. An --cql-addr among s's
// arguments comes after it, and wins.
func (s *server) cqlArgs() []string {
	return []string{"--cql-addr", s.cqlAddr}
}

// start runs the process and waits until /readyz answers 200. extra
// arguments are remembered for later restarts.
func (s *server) start(extra ...string) {
	s.t.Helper()
	if len(extra) > 0 {
		s.args = extra
	}
	s.startAsync()
	s.waitReady()
}

// startAsync runs the process without waiting for it.
func (s *server) startAsync() {
	s.t.Helper()
	// A connection to the previous process may sit in reconnect backoff;
	// clients of this one get a fresh connection.
	s.conn = nil
	s.cmd = exec.Command(cmp.Or(s.bin, binary), s.serveArgs()...)
	if len(s.env) > 0 {
		s.cmd.Env = append(os.Environ(), s.env...)
	}
	s.stderr = &syncBuffer{}
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	exited := make(chan struct{})
	s.exited = exited
	cmd := s.cmd
	go func() { cmd.Wait(); close(exited) }()
	s.t.Cleanup(s.kill)
}

// running reports whether the process is up.
func (s *server) running() bool {
	if s.exited == nil {
		return false
	}
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// waitReady waits until /readyz answers 200. If the process could not
// bind its client ports (another process took a port freeAddr handed out),
// it starts again on new ones, a few times.
func (s *server) waitReady() {
	s.t.Helper()
	if err := s.readyErr(30 * time.Second); err != nil {
		s.t.Fatalf("server not ready: %v", err)
	}
}

// readyErr is waitReady returning the failure instead of failing the test.
func (s *server) readyErr(limit time.Duration) error {
	rebinds := 0
	deadline := time.Now().Add(limit)
	for {
		err := func() error {
			select {
			case <-s.exited:
				if out := s.stderr.String(); strings.Contains(out, "address already in use") && rebinds < 3 {
					peer := strings.Contains(out, "peer listener")
					if peer && !s.firstStartAlone() {
						return fmt.Errorf("server exited: %s", out)
					}
					rebinds++
					if peer {
						s.peers = freeAddr(s.t)
					} else {
						s.grpcAddr, s.httpAddr, s.cqlAddr = freeAddr(s.t), freeAddr(s.t), freeAddr(s.t)
					}
					s.startAsync()
					return fmt.Errorf("port taken; restarting on new ports")
				}
				return fmt.Errorf("server exited: %s", s.stderr.String())
			default:
			}
			resp, err := http.Get("http://" + s.httpAddr + "/readyz")
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("readyz: %s", resp.Status)
			}
			return nil
		}()
		if err == nil {
			return nil
		}
		if strings.Contains(err.Error(), "server exited") || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// firstStartAlone reports whether s is a member of no other cluster
// (neither --initial-cluster nor --join) starting on a data dir that does
// not exist yet: its peer address is written nowhere, so a clash on it
// (another process took the port freeAddr handed out) can be retried on
// another one.
func (s *server) firstStartAlone() bool {
	for _, a := range s.args {
		if strings.HasPrefix(a, "--initial-cluster") || strings.HasPrefix(a, "--join") {
			return false
		}
	}
	entries, err := os.ReadDir(s.dir)
	return errors.Is(err, os.ErrNotExist) || err == nil && len(entries) == 0
}

// kill sends SIGKILL and waits for the process to go.
func (s *server) kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.exited:
		return
	default:
	}
	s.cmd.Process.Kill()
	<-s.exited
}

// stop sends SIGTERM (drain) and waits, bounded, for a clean exit.
func (s *server) stop() {
	s.t.Helper()
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		s.kill()
		s.t.Fatalf("server did not stop after SIGINT: %s", s.stderr.String())
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		s.t.Fatalf("server exit code %d after SIGINT: %s", code, s.stderr.String())
	}
}

// client returns a client of the server's gRPC address, on one connection
// per process start.
func (s *server) client() pb.MetadataServiceClient {
	s.t.Helper()
	if s.conn == nil {
		conn, err := grpc.NewClient(s.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			s.t.Fatal(err)
		}
		s.t.Cleanup(func() { conn.Close() })
		s.conn = conn
	}
	return pb.NewMetadataServiceClient(s.conn)
}

// cli runs a metalog client subcommand against the server and returns its
// stdout, stderr and exit code.
func (s *server) cli(args ...string) (stdout, stderr string, code int) {
	s.t.Helper()
	return runBinary(s.t, append(args, "--endpoints", s.grpcAddr)...)
}

// runBinary runs metalog with args, bounded in time, and returns its
// stdout, stderr and exit code.
func runBinary(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("metalog %s: %v", strings.Join(args, " "), err)
		}
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// waitLog waits until the process has logged a line containing text: a
// line logged just after a change the test can see may still be on its
// way through the pipe when the test sees the change.
func (s *server) waitLog(limit time.Duration, text string) {
	s.t.Helper()
	waitFor(s.t, limit, "the log line "+strconv.Quote(text), func() error {
		if !strings.Contains(s.stderr.String(), text) {
			return errors.New("not logged yet:\n" + s.stderr.String())
		}
		return nil
	})
}

// waitFor polls cond until it returns nil or the deadline passes.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s: %v", limit, what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPortClashOnFirstStartIsRetried: a member alone whose peer port was
// taken between freeAddr and its start (by another test's process, say)
// starts again on another port, so that such a race fails no test.
func TestPortClashOnFirstStartIsRetried(t *testing.T) {
	s := newServer(t)
	taken, err := net.Listen("tcp", s.peers)
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	clashed := s.peers
	s.start()
	if s.peers == clashed {
		t.Fatalf("the server started on the taken peer port %s", clashed)
	}
}
