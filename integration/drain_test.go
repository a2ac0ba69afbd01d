package integration

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// httpWatch is a GET /v1/watch stream read line by line in the background.
type httpWatch struct {
	lines syncBuffer
	done  chan struct{} // closed when the response body ended
}

func startHTTPWatch(t *testing.T, ctx context.Context, url string) *httpWatch {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	w := &httpWatch{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			fmt.Fprintln(&w.lines, sc.Text())
		}
	}()
	return w
}

// printedEpochs are the epochs of the lines `metalog watch` printed, in
// order ("epoch 12  2026-...  token:ci  CREATE TABLE ks.t").
func printedEpochs(out string) []uint64 {
	var epochs []uint64
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "epoch" {
			continue
		}
		if e, err := strconv.ParseUint(f[1], 10, 64); err == nil {
			epochs = append(epochs, e)
		}
	}
	return epochs
}

// TestDrainEndsWatchesAtOnce: SIGTERM to a member with an open `metalog
// watch` and an HTTP /v1/watch stream ends both feeds at once with
// Unavailable "shutting down", so the member exits without waiting out its
// drain timeout (60s here, longer than the test waits); the CLI, given two
// members, resumes on the other from its epoch and prints every change
// once, in order.
func TestDrainEndsWatchesAtOnce(t *testing.T) {
	c := newCluster(t, 3, "--drain-timeout", "60s")
	victim := c.servers[(c.leader()+1)%3]
	var other *server
	for _, s := range c.servers {
		if s != victim {
			other = s
			break
		}
	}
	if out, errOut, rc := other.cli("exec", "-e", ksRF3); rc != 0 {
		t.Fatalf("exec: rc=%d %s %s", rc, out, errOut)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The victim first: the watch starts there.
	watch := exec.CommandContext(ctx, binary, "watch", "--from-epoch", "0", "--endpoints", victim.grpcAddr+","+other.grpcAddr)
	var watched, watchErr syncBuffer
	watch.Stdout, watch.Stderr = &watched, &watchErr
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); watch.Wait() }()
	hw := startHTTPWatch(t, ctx, "http://"+victim.httpAddr+"/v1/watch?from_epoch=0")
	waitFor(t, 30*time.Second, "both watches at epoch 1", func() error {
		if len(printedEpochs(watched.String())) == 0 || !strings.Contains(hw.lines.String(), `"epoch":"1"`) {
			return fmt.Errorf("metalog watch printed %q (%s), the HTTP watch %q", watched.String(), watchErr.String(), hw.lines.String())
		}
		return nil
	})

	if err := victim.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Well before the 60s drain timeout: only ending the feeds lets it go.
	if code := victim.waitExit(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM:\n%s", code, victim.stderr.String())
	}
	select {
	case <-hw.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the HTTP watch is still open after the member exited")
	}
	lines := strings.Split(strings.TrimSpace(hw.lines.String()), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `"code":14`) || !strings.Contains(last, "shutting down") {
		t.Fatalf("the HTTP watch ended with %q, want Unavailable (14): shutting down", last)
	}
	if log := victim.stderr.String(); strings.Contains(log, "drain timed out") || !strings.Contains(log, "msg=stopped") {
		t.Fatalf("the drain waited for its timeout or did not finish:\n%s", log)
	}

	// The CLI goes on on the other member and misses nothing.
	for i := range 5 {
		if out, errOut, rc := other.cli("exec", "-e", fmt.Sprintf("CREATE TABLE ks.t%d (id int PRIMARY KEY)", i)); rc != 0 {
			t.Fatalf("exec: rc=%d %s %s", rc, out, errOut)
		}
	}
	waitFor(t, 30*time.Second, "the watch printing epoch 6", func() error {
		if e := printedEpochs(watched.String()); len(e) == 0 || e[len(e)-1] < 6 {
			return fmt.Errorf("printed %q (%s)", watched.String(), watchErr.String())
		}
		return nil
	})
	got := printedEpochs(watched.String())
	for i, e := range got {
		if e != uint64(i+1) {
			t.Fatalf("epochs printed %v: want 1 to 6, each once, in order:\n%s", got, watched.String())
		}
	}
	if len(got) != 6 {
		t.Fatalf("epochs printed %v, want 1 to 6", got)
	}
}
