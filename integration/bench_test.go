package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/metalog/metalog/bench"
)

// TestBenchSmoke runs every `metalog bench` subcommand at a small size, so
// the benchmark keeps working; the figures themselves are not asserted
// (tests never judge wall-clock times), only that each run did the work
// it reports.
func TestBenchSmoke(t *testing.T) {
	version, _, _ := binaryVersion(t)
	t.Run("tables", func(t *testing.T) {
		t.Parallel()
		var r struct {
			System       string    `json:"system"`
			Version      string    `json:"version"`
			Nodes        int       `json:"nodes"`
			Tables       int       `json:"tables"`
			Clients      int       `json:"clients"`
			OpsPerSecond float64   `json:"ops_per_second"`
			BucketMeanMs []float64 `json:"bucket_mean_ms"`
			P50Ms        float64   `json:"p50_ms"`
			P99Ms        float64   `json:"p99_ms"`
			PeakRSS      int64     `json:"peak_rss_bytes"`
			DiskBytes    int64     `json:"disk_bytes"`
			Target       string    `json:"target"`
			// The server load's fields, named as in bench.ServerLoad.
			bench.ServerLoad
		}
		// Clients on the followers: every DDL is forwarded to the leader.
		runBench(t, &r, "tables", "--nodes", "3", "--tables", "200", "--clients", "4", "--buckets", "4", "--target", "followers")
		if r.System != "metalog" || r.Version != version || r.Nodes != 3 || r.Tables != 200 || r.Clients != 4 || r.Target != "followers" {
			t.Errorf("run described as %+v, want metalog %s, 3 nodes, 200 tables, 4 clients, target followers", r, version)
		}
		if len(r.BucketMeanMs) != 4 || r.OpsPerSecond <= 0 || r.P50Ms <= 0 || r.P99Ms < r.P50Ms {
			t.Errorf("latency figures %+v: want 4 buckets, positive ops/s and p50 <= p99", r)
		}
		if r.PeakRSS <= 0 || r.DiskBytes <= 0 {
			t.Errorf("peak RSS %d, disk %d: want both measured", r.PeakRSS, r.DiskBytes)
		}
		checkServerLoad(t, r.ServerLoad, 200)
	})
	// The recovery results are decoded into the bench package's own types;
	// only tables is compared with the etcd peer's field names above.
	t.Run("restart", func(t *testing.T) {
		t.Parallel()
		var r bench.RecoveryResult
		runBench(t, &r, "restart", "--tables", "200", "--kill")
		if r.Benchmark != "restart" || r.Version != version || r.Tables != 200 || r.Seconds <= 0 || !r.Kill {
			t.Errorf("restart result %+v", r)
		}
	})
	t.Run("catchup", func(t *testing.T) {
		t.Parallel()
		var r bench.RecoveryResult
		runBench(t, &r, "catchup", "--tables", "200")
		// 200 CREATE TABLE entries, and possibly an empty leader entry.
		if r.Benchmark != "catchup" || r.Version != version || r.Entries < 200 || r.Entries > 210 || r.EntriesPerSecond <= 0 || r.ReplaySeconds <= 0 {
			t.Errorf("catchup result %+v: want about 200 entries replayed", r)
		}
	})
	t.Run("watch", func(t *testing.T) {
		t.Parallel()
		var r bench.WatchResult
		// 4 watchers on each member, sharing one connection there; 1000
		// history epochs: both reads at the same epoch.
		runBench(t, &r, "watch", "--nodes", "3", "--tables", "20", "--watchers", "12", "--streams-per-connection", "4", "--history-epochs", "1000")
		if r.Benchmark != "watch" || r.Version != version || r.Nodes != 3 || r.Tables != 20 || r.Watchers != 12 || r.Connections != 3 {
			t.Errorf("watch run described as %+v, want 3 nodes, 20 tables, 12 watchers on 3 connections", r)
		}
		d := r.Delivery
		if d.Mismatched != 0 || d.EventsPerWatcherMin != 20 || d.EventsPerWatcherMax != 20 || d.FollowerWatchers != 8 || d.Pairs != 8*20 {
			t.Errorf("delivery %+v: want 20 events for each watcher, 8 on followers", d)
		}
		if r.WithWatchers.P50Ms <= 0 || r.Baseline.P50Ms <= 0 || r.HistoryRecords != 20 || r.History == nil || r.History.End.Epoch != r.History.Start.Epoch || r.History.End.NewestMs <= 0 {
			t.Errorf("watch result %+v: want latencies, 20 history records, both history reads at one epoch", r)
		}
	})
	t.Run("watch-observers", func(t *testing.T) {
		t.Parallel()
		var r bench.WatchResult
		// 2 watchers on each of 2 observers, none on the 3 voters.
		runBench(t, &r, "watch", "--nodes", "3", "--observers", "2", "--tables", "20", "--watchers", "4")
		d := r.Delivery
		if r.Observers != 2 || r.Nodes != 3 || len(d.EventsSentPerNode) != 5 || d.EventsSentPerNode[3] != 40 || d.EventsSentPerNode[4] != 40 {
			t.Errorf("watch run described as %+v, want 3 voters, 2 observers sending 40 events each", r)
		}
		if d.Mismatched != 0 || d.EventsPerWatcherMin != 20 || d.EventsPerWatcherMax != 20 || d.FollowerWatchers != 4 || len(r.WithWatchers.MemberCPUSeconds) != 5 {
			t.Errorf("delivery %+v: want 20 events for each watcher, all 4 off the leader, the CPU of 5 members", d)
		}
	})
	t.Run("rebuild", func(t *testing.T) {
		t.Parallel()
		var r bench.RebuildResult
		runBench(t, &r, "rebuild", "--tables", "200")
		// 200 minimal tables take over 4 KiB even in a compressed store
		// snapshot (about 10 KiB, with the requests that created them).
		if r.Benchmark != "rebuild" || r.Version != version || r.Tables != 200 || r.SnapshotBytes < 4<<10 || r.RebuildSecs <= 0 || r.CopySecs <= 0 {
			t.Errorf("rebuild result %+v", r)
		}
	})
}

// checkServerLoad checks the table phase's server load of a run of tables
// DDLs on 3 members the benchmark started: 200 fsynced DDLs take well over
// the kernel's 10 ms CPU tick on the members, and each DDL switches
// contexts at least once (a wait for the disk).
func checkServerLoad(t *testing.T, l bench.ServerLoad, tables int) {
	t.Helper()
	cpu, perNode, leader, note := l.ServerCPUSeconds, l.ServerCPUPerNodeSeconds, l.ServerCPULeader, l.ServerLoadNote
	if runtime.GOOS != "linux" {
		if note == "" {
			t.Errorf("server load without /proc: want a note saying it is not measured")
		}
		return
	}
	var sum float64
	for _, c := range perNode {
		sum += c
	}
	if cpu <= 0 || len(perNode) != 3 || math.Abs(sum-cpu) > 1e-6 || leader < 0 || leader > 2 || note != "" {
		t.Errorf("server CPU %v s, per node %v, leader %d, note %q: want positive, 3 members summing to it, a leader among them, no note", cpu, perNode, leader, note)
	}
	if math.Abs(l.CPUPerDDLMs-cpu*1000/float64(tables)) > 1e-6 || l.CtxSwitchesPerDDL < 1 {
		t.Errorf("CPU per DDL %v ms, context switches per DDL %v: want %v ms and at least 1", l.CPUPerDDLMs, l.CtxSwitchesPerDDL, cpu*1000/float64(tables))
	}
	// Each member gets each DDL's result one way or the other once it
	// applies it; the one that acknowledged it has.
	if got := l.PreparedPerDDL + l.ExecutedOnApplyPerDDL; got < 1 || got > 3 {
		t.Errorf("prepared %v + executed on apply %v per DDL: want 1 to 3 (3 members, each once)", l.PreparedPerDDL, l.ExecutedOnApplyPerDDL)
	}
}

// runBench runs `metalog bench NAME ARGS --json` and decodes its output
// into v.
func runBench(t *testing.T, v any, args ...string) {
	t.Helper()
	stdout, stderr, code := runBinary(t, append(append([]string{"bench"}, args...), "--json")...)
	if code != 0 {
		t.Fatalf("metalog bench %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), v); err != nil {
		t.Fatalf("metalog bench %s printed %q: %v", strings.Join(args, " "), stdout, err)
	}
}

// TestBenchSecuredEndpoints runs `bench tables --endpoints` against a
// member with client TLS and token authentication: with a token of the
// roles it needs it measures, without one it is refused.
func TestBenchSecuredEndpoints(t *testing.T) {
	ca := newPKI(t, "clients")
	srvCert, srvKey := ca.issue("server", "metalog-server", time.Time{}, time.Time{})
	tokens := filepath.Join(ca.dir, "tokens")
	if err := os.WriteFile(tokens, []byte("bench "+tokenHash("bench-token")+" ddl,operator,reader\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newServer(t)
	s.args = []string{"--client-cert-file", srvCert, "--client-key-file", srvKey, "--client-ca-file", ca.caFile, "--auth-token-file", tokens, insecurePeerArg}
	s.startAsync()
	s.waitReadyTLS(ca.tlsConfig(""))

	if _, stderr, code := runBinary(t, "bench", "tables", "--endpoints", s.grpcAddr, "--tables", "20", "--cacert", ca.caFile, "--json"); code == 0 || !strings.Contains(stderr, "Unauthenticated") {
		t.Errorf("bench without a token: exit %d, stderr %q; want Unauthenticated", code, stderr)
	}
	var r struct {
		Tables       int     `json:"tables"`
		OpsPerSecond float64 `json:"ops_per_second"`
		CPUSeconds   float64 `json:"server_cpu_seconds"`
		CPULeader    int     `json:"server_cpu_leader"`
		LoadNote     string  `json:"server_load_note"`
	}
	runBench(t, &r, "tables", "--endpoints", s.grpcAddr, "--tables", "20", "--buckets", "2", "--cacert", ca.caFile, "--token", "bench-token")
	if r.Tables != 20 || r.OpsPerSecond <= 0 {
		t.Errorf("secured run: %+v", r)
	}
	// The member is not the benchmark's process: no server load, and the
	// output says so.
	if r.CPUSeconds != 0 || r.CPULeader != -1 || !strings.Contains(r.LoadNote, "--endpoints") {
		t.Errorf("server load against --endpoints: %+v, want none and a note naming --endpoints", r)
	}
}

// TestBenchMembersDieWithIt: the members a benchmark started stop when it
// is killed (SIGKILL: no cleanup of its own runs), so that none is left
// running to skew the next measurement.
func TestBenchMembersDieWithIt(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	dir := t.TempDir()
	cmd := exec.Command(binary, "bench", "tables", "--nodes", "1", "--tables", "10000000", "--dir", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(t, 30*time.Second, "the benchmark's member", func() error {
		if len(membersIn(dir)) == 0 {
			return errors.New("no member running yet")
		}
		return nil
	})
	cmd.Process.Kill()
	cmd.Wait()
	waitFor(t, 30*time.Second, "the member to stop with the benchmark", func() error {
		if pids := membersIn(dir); len(pids) > 0 {
			return fmt.Errorf("still running: %v", pids)
		}
		return nil
	})
}

// membersIn lists the metalog serve processes whose command line
// mentions dir (not the benchmark itself, whose --dir it is too).
func membersIn(dir string) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		line, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(line), "\x00serve\x00") && strings.Contains(string(line), dir) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}
