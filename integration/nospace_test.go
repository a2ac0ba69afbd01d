package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// smallFS mounts a tmpfs of size bytes for the test and returns its
// path; it is unmounted after the test's processes are killed. It skips
// the test where that is not possible (not root, no mount).
func smallFS(t *testing.T, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root; the member tests cover the alarm with a fault-injecting free-space source")
	}
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("cannot mount a tmpfs (%v: %s); the member tests cover the alarm with a fault-injecting free-space source", err, strings.TrimSpace(string(out)))
	}
	// Registered before any server starts, so it runs after their kills.
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// filler takes the free space of a filesystem, as another process
// writing to the same disk would.
type filler struct {
	t    *testing.T
	path string
}

// leave allocates space until about free bytes are left (fallocate: tmpfs
// keeps the pages).
func (f filler) leave(free uint64) {
	f.t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(f.path), &st); err != nil {
		f.t.Fatal(err)
	}
	avail := st.Bavail * uint64(st.Bsize)
	if avail <= free {
		return
	}
	file, err := os.OpenFile(f.path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		f.t.Fatal(err)
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		f.t.Fatal(err)
	}
	if err := unix.Fallocate(int(file.Fd()), 0, fi.Size(), int64(avail-free)); err != nil {
		f.t.Fatalf("fallocate %d bytes: %v", avail-free, err)
	}
}

// fillUp allocates every free byte, a MiB at a time until none is left.
func (f filler) fillUp() {
	f.t.Helper()
	file, err := os.OpenFile(f.path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		f.t.Fatal(err)
	}
	defer file.Close()
	for step := int64(1 << 20); step >= 4096; {
		fi, err := file.Stat()
		if err != nil {
			f.t.Fatal(err)
		}
		if err := unix.Fallocate(int(file.Fd()), 0, fi.Size(), step); err != nil {
			if !errors.Is(err, unix.ENOSPC) {
				f.t.Fatal(err)
			}
			step /= 2
		}
	}
}

func (f filler) remove() {
	f.t.Helper()
	if err := os.Remove(f.path); err != nil {
		f.t.Fatal(err)
	}
}

// ackedTables records the tables whose CREATE was acknowledged.
type ackedTables struct {
	mu    sync.Mutex // guards names
	names []string
}

// create creates ks.<name>, recording it when acknowledged.
func (a *ackedTables) create(ctx context.Context, c pb.MetadataServiceClient, name string) error {
	_, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks." + name + " (id int PRIMARY KEY, v text)", RequestId: "nospace-" + name})
	if err == nil {
		a.mu.Lock()
		a.names = append(a.names, name)
		a.mu.Unlock()
	}
	return err
}

// check fails the test unless every acknowledged table is in the schema s
// serves.
func (a *ackedTables) check(t *testing.T, s *server, when string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := s.client().GetKeyspace(ctx, &pb.GetKeyspaceRequest{Keyspace: "ks"})
	if err != nil {
		t.Fatalf("%s: read: %v", when, err)
	}
	have := map[string]bool{}
	for _, tb := range r.Keyspace.GetTables() {
		have[tb.Name] = true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, n := range a.names {
		if !have[n] {
			t.Fatalf("%s: acknowledged table ks.%s is gone (%d acknowledged, %d tables)", when, n, len(a.names), len(have))
		}
	}
	t.Logf("%s: all %d acknowledged tables are there", when, len(a.names))
}

// TestNoSpaceOnASmallDisk runs a member on a 64 MiB tmpfs with
// min_free_space_bytes at 24 MiB and fills the disk under DDL load: DDL is
// refused with the NOSPACE alarm (gRPC ResourceExhausted, HTTP 507) while
// reads, /readyz (degraded), /metrics and cluster status answer and the
// process stays up, through a kill -9 and a disk filled to the last byte;
// once the space is freed DDL is accepted again without a restart, and no
// acknowledged table is ever lost.
func TestNoSpaceOnASmallDisk(t *testing.T) {
	mnt := smallFS(t, 64<<20)
	s := newServer(t)
	s.dir = filepath.Join(mnt, "data")
	s.start("--min-free-space-bytes", fmt.Sprint(24<<20))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := s.client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}); err != nil {
		t.Fatal(err)
	}
	acked := &ackedTables{}
	fill := filler{t: t, path: filepath.Join(mnt, "filler")}

	// DDL load while another writer takes the disk's space.
	refused := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			err := acked.create(ctx, s.client(), fmt.Sprintf("load%d", i))
			if status.Code(err) == codes.ResourceExhausted {
				refused <- err
				return
			}
			if err != nil {
				refused <- fmt.Errorf("create under load: %w", err)
				return
			}
		}
	}()
	time.Sleep(200 * time.Millisecond)
	fill.leave(8 << 20)
	var err error
	select {
	case err = <-refused:
	case <-time.After(30 * time.Second):
		t.Fatal("DDL still accepted 30s after the disk was filled past min_free_space_bytes")
	}
	wg.Wait()
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatal(err)
	}
	msg := status.Convert(err).Message()
	for _, want := range []string{"NOSPACE", s.dir, "bytes free", "min_free_space_bytes (25165824)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q does not say %q", msg, want)
		}
	}
	t.Logf("refused after %d tables: %s", len(acked.names), msg)

	checkNoSpaceAlarm := func(when string) {
		t.Helper()
		if !s.running() {
			t.Fatalf("%s: the process exited: %s", when, s.stderr.String())
		}
		code, body := httpDo(t, "POST", "http://"+s.httpAddr+"/v1/execute", `{"statements": "CREATE TABLE ks.http (id int PRIMARY KEY)"}`)
		if code != 507 || !strings.Contains(body, "NOSPACE") {
			t.Errorf("%s: POST /v1/execute: %d %s, want 507 naming the alarm", when, code, body)
		}
		code, body = httpDo(t, "PUT", "http://"+s.httpAddr+"/v1/guardrails", `{"set": {"tables_warn_threshold": "5"}}`)
		if code != 507 {
			t.Errorf("%s: PUT /v1/guardrails: %d %s, want 507", when, code, body)
		}
		acked.check(t, s, when)
		if code, body := httpDo(t, "GET", "http://"+s.httpAddr+"/readyz", ""); code != 200 || !strings.Contains(body, "degraded: no space") {
			t.Errorf("%s: /readyz: %d %q, want 200 degraded: no space", when, code, body)
		}
		if _, body := httpDo(t, "GET", "http://"+s.httpAddr+"/metrics", ""); !strings.Contains(body, `metalog_alarm{kind="nospace"} 1`) {
			t.Errorf(`%s: /metrics has no metalog_alarm{kind="nospace"} 1`, when)
		}
		if out, stderr, rc := s.cli("cluster", "status"); rc != 0 || !strings.Contains(out, "NOSPACE") {
			t.Errorf("%s: cluster status: rc=%d, no NOSPACE:\n%s%s", when, rc, out, stderr)
		}
	}
	checkNoSpaceAlarm("below min_free_space_bytes")

	s.kill()
	s.start()
	checkNoSpaceAlarm("restarted after kill -9 without space")

	fill.fillUp()
	time.Sleep(2 * spaceCheck)
	checkNoSpaceAlarm("disk full to the last byte")

	fill.remove()
	waitFor(t, 10*time.Second, "DDL accepted once space is freed", func() error {
		return acked.create(ctx, s.client(), "after")
	})
	for i := range 20 {
		if err := acked.create(ctx, s.client(), fmt.Sprintf("more%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, body := httpDo(t, "GET", "http://"+s.httpAddr+"/metrics", ""); !strings.Contains(body, `metalog_alarm{kind="nospace"} 0`) {
		t.Errorf(`space freed: /metrics has no metalog_alarm{kind="nospace"} 0`)
	}
	s.kill()
	s.start()
	acked.check(t, s, "restarted after kill -9 with space again")
}

// spaceCheck is how often a member checks its free space besides before
// each append batch (member.spaceCheckInterval).
const spaceCheck = time.Second
