package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/internal/buildinfo"
)

// RebuildResult compares a fresh replica's rebuild with a plain copy of
// the same snapshot file on the same disk.
type RebuildResult struct {
	Benchmark string `json:"benchmark"`
	// Version is the module version of the metalog binary that ran the
	// benchmark (and started its members), as `metalog version` prints it.
	Version       string  `json:"version"`
	Tables        int     `json:"tables"`
	SnapshotBytes int64   `json:"snapshot_bytes"`
	RebuildSecs   float64 `json:"rebuild_seconds"`
	CopySecs      float64 `json:"copy_seconds"`
	Ratio         float64 `json:"rebuild_copy_ratio"`
}

// Rebuild loads Tables tables into a one-member cluster that snapshots and
// compacts, adds a second member, and times from starting it to it having
// applied everything (through the snapshot), against copying the snapshot
// file it received with an fsync.
func Rebuild(ctx context.Context, o RecoveryOptions) (*RebuildResult, error) {
	o.defaults()
	dir, err := os.MkdirTemp("", "metalog-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	args := append([]string{"--snapshot-interval-entries", "20", "--snapshot-catch-up-entries", "5"}, o.ServeArgs...)
	c, err := startCluster(ctx, o.Binary, dir, 1, args, nil, false)
	if err != nil {
		return nil, err
	}
	defer c.stop()
	leader := c.nodes[0]
	cl, err := leader.client()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	if err := createTables(ctx, cl, 1, o.Tables, o.Progress); err != nil {
		return nil, err
	}
	// More entries than the snapshot interval, so the log is compacted
	// behind a snapshot: the leader then takes one at once for the new
	// member (which holds every table) and sends it.
	var epoch uint64
	for i := range 25 {
		r, err := cl.Execute(ctx, &pb.ExecuteRequest{Statements: fmt.Sprintf("CREATE TABLE IF NOT EXISTS ks.pad_%d (id int PRIMARY KEY)", i)})
		if err != nil {
			return nil, err
		}
		epoch = r.Epoch
	}

	start := time.Now()
	fresh, err := c.addMember(ctx, cl, "n2", false, leader.grpcAddr, o.ServeArgs)
	if err != nil {
		return nil, err
	}
	fc, err := fresh.client()
	if err != nil {
		return nil, err
	}
	defer fc.Close()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	if _, err := fc.GetTable(wctx, &pb.GetTableRequest{Keyspace: "ks", Table: "pad_24", MinEpoch: epoch}); err != nil {
		return nil, fmt.Errorf("waiting for the new member: %w", err)
	}
	rebuild := time.Since(start)
	// The baseline: the bytes the new member received (the newest
	// snapshot in its data dir), copied on the same disk, with an fsync.
	snap, err := newestSnapshot(filepath.Join(fresh.dir, "snap"))
	if err != nil {
		return nil, err
	}
	copyTook, size, err := copyFile(snap, filepath.Join(dir, "copy.snap"))
	if err != nil {
		return nil, err
	}
	return &RebuildResult{Benchmark: "rebuild", Version: buildinfo.Read().Version, Tables: o.Tables, SnapshotBytes: size,
		RebuildSecs: rebuild.Seconds(), CopySecs: copyTook.Seconds(), Ratio: rebuild.Seconds() / copyTook.Seconds()}, nil
}

// newestSnapshot returns the newest .snap file in dir (names sort by term
// and index).
func newestSnapshot(dir string) (string, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "*.snap"))
	if err != nil || len(matches) == 0 {
		return "", fmt.Errorf("no snapshot file in %s (%v)", dir, err)
	}
	sort.Strings(matches)
	return matches[len(matches)-1], nil
}

// copyFile copies from to to and fsyncs it, returning the time taken.
func copyFile(from, to string) (time.Duration, int64, error) {
	start := time.Now()
	in, err := os.Open(from)
	if err != nil {
		return 0, 0, err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return 0, 0, err
	}
	n, err := io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return time.Since(start), n, err
}
