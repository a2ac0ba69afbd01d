package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// HistoryFigures are the history phase's: a one-member cluster (fsync
// on) given many epochs fast, then the newest-page History and at-epoch
// GetSchema timed after the first 1000 epochs and after the last.
type HistoryFigures struct {
	// Epochs is how many epochs were made (ALTER TABLE ... WITH comment,
	// each statement its own epoch, in non-atomic requests of up to
	// historyRequestStatements), and EpochsPerSecond how fast.
	Epochs          int     `json:"epochs"`
	LoadSeconds     float64 `json:"load_seconds"`
	EpochsPerSecond float64 `json:"epochs_per_second"`
	// Start is timed after the first 1000 epochs, End after all of them.
	Start HistoryReads `json:"start"`
	End   HistoryReads `json:"end"`
}

// HistoryReads are the read times at one point of the history phase.
type HistoryReads struct {
	// Epoch is the member's epoch then, and OldestEpoch the oldest it
	// keeps (HistoryResponse.oldest_epoch).
	Epoch       uint64 `json:"epoch"`
	OldestEpoch uint64 `json:"oldest_epoch"`
	// NewestMs is the median of historyReadRuns History calls for the
	// newest 100 events (limit 100, no from_epoch).
	NewestMs float64 `json:"history_newest_100_median_ms"`
	// AtMinus100Ms and AtMinus10000Ms are the medians of schemaReadRuns
	// GetSchema calls with at_epoch Epoch-100 and Epoch-10000; the latter
	// is absent when that epoch is before the history kept.
	AtMinus100Ms   float64  `json:"get_schema_at_minus_100_median_ms"`
	AtMinus10000Ms *float64 `json:"get_schema_at_minus_10000_median_ms,omitempty"`
}

// The history phase's sizes.
const (
	// historyRequestStatements is the most statements of one request
	// (max_statements_per_request is 10000).
	historyRequestStatements = 1000
	// historyPage is the History limit timed.
	historyPage = 100
	// historyReadRuns and schemaReadRuns are how many times each read is
	// timed; the median is reported.
	historyReadRuns = 20
	schemaReadRuns  = 5
)

// historyPhase is phase 4: HistoryEpochs epochs on a fresh one-member
// cluster, with the reads timed after the first 1000 and at the end.
func (o *WatchOptions) historyPhase(ctx context.Context) (*HistoryFigures, error) {
	p, err := o.startPhase(ctx, "history", 1)
	if err != nil {
		return nil, err
	}
	defer p.close()
	created, err := p.cl.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.t (id int PRIMARY KEY, v text)"})
	if err != nil {
		return nil, fmt.Errorf("bench: history: create ks.t: %w", err)
	}
	h := &HistoryFigures{Epochs: o.HistoryEpochs}
	var done atomic.Int64
	stop := progressOf(o.Progress, "epochs", o.HistoryEpochs, &done)
	defer stop()
	var load time.Duration
	epoch := created.Epoch
	for i, upTo := range []int{historyStartEpochs, o.HistoryEpochs} {
		start := time.Now()
		if epoch, err = p.alterEpochs(ctx, epoch, int(done.Load()), upTo, &done); err != nil {
			return nil, err
		}
		load += time.Since(start)
		reads := []*HistoryReads{&h.Start, &h.End}[i]
		if *reads, err = p.timeReads(ctx, epoch); err != nil {
			return nil, err
		}
	}
	h.LoadSeconds = load.Seconds()
	h.EpochsPerSecond = float64(o.HistoryEpochs) / load.Seconds()
	return h, nil
}

// alterEpochs makes the epochs from to to (counted from 0), one ALTER
// TABLE ks.t WITH comment each, in non-atomic requests of up to
// historyRequestStatements, and returns the epoch then (epoch, the
// current one, when it made none).
func (p *phase) alterEpochs(ctx context.Context, epoch uint64, from, to int, done *atomic.Int64) (uint64, error) {
	var b strings.Builder
	for i := from; i < to; i += historyRequestStatements {
		n := min(historyRequestStatements, to-i)
		b.Reset()
		for j := i; j < i+n; j++ {
			fmt.Fprintf(&b, "ALTER TABLE ks.t WITH comment = 'c%d';", j)
		}
		rctx, cancel := context.WithTimeout(ctx, setupTimeout)
		resp, err := p.cl.Execute(rctx, &pb.ExecuteRequest{Statements: b.String()})
		cancel()
		if err != nil {
			return 0, fmt.Errorf("bench: history: epochs %d to %d: %w", i, i+n-1, err)
		}
		if len(resp.Results) != n {
			return 0, fmt.Errorf("bench: history: a request of %d statements applied %d", n, len(resp.Results))
		}
		epoch = resp.Epoch
		done.Store(int64(i + n))
	}
	return epoch, nil
}

// timeReads times the newest page of History and GetSchema at earlier
// epochs, the member being at epoch.
func (p *phase) timeReads(ctx context.Context, epoch uint64) (HistoryReads, error) {
	r := HistoryReads{Epoch: epoch}
	newest, err := medianOf(historyReadRuns, func() error {
		resp, err := p.cl.History(ctx, &pb.HistoryRequest{Limit: historyPage})
		if err != nil {
			return fmt.Errorf("bench: history: newest %d: %w", historyPage, err)
		}
		if n := len(resp.Events); n != historyPage || resp.Events[n-1].Epoch != epoch {
			return fmt.Errorf("bench: history: the newest %d events are %d, the member at epoch %d; want %d to epoch %d", historyPage, n, resp.Epoch, historyPage, epoch)
		}
		r.OldestEpoch = resp.OldestEpoch
		return nil
	})
	if err != nil {
		return r, err
	}
	r.NewestMs = ms(newest)
	if r.AtMinus100Ms, err = p.timeSchemaAt(ctx, epoch-100); err != nil {
		return r, err
	}
	if epoch >= 10000 && epoch-10000 >= r.OldestEpoch-1 {
		at, err := p.timeSchemaAt(ctx, epoch-10000)
		if err != nil {
			return r, err
		}
		r.AtMinus10000Ms = &at
	}
	return r, nil
}

// timeSchemaAt returns the median time, in ms, of GetSchema at epoch.
func (p *phase) timeSchemaAt(ctx context.Context, epoch uint64) (float64, error) {
	d, err := medianOf(schemaReadRuns, func() error {
		resp, err := p.cl.GetSchema(ctx, &pb.GetSchemaRequest{AtEpoch: proto.Uint64(epoch)})
		if err != nil {
			return fmt.Errorf("bench: history: schema at epoch %d: %w", epoch, err)
		}
		if resp.Epoch != epoch {
			return fmt.Errorf("bench: history: the schema at epoch %d answered epoch %d", epoch, resp.Epoch)
		}
		return nil
	})
	return ms(d), err
}

// medianOf runs f n times and returns the median of its times.
func medianOf(n int, f func() error) (time.Duration, error) {
	times := make([]time.Duration, n)
	for i := range times {
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		times[i] = time.Since(start)
	}
	slices.Sort(times)
	return percentile(times, 0.5), nil
}

// historyBucket is the bucket of schema.db that holds one encoded record
// per epoch under its 8-byte big-endian epoch (package metadata's format).
var historyBucket = []byte("history")

// historyRecordSize opens the schema.db of a stopped member's data dir
// read-only and returns how many records of the epochs in (from, to] its
// history bucket holds and their mean size in bytes.
func historyRecordSize(dir string, from, to uint64) (int, float64, error) {
	path := filepath.Join(dir, "schema.db")
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return 0, 0, fmt.Errorf("bench: open %s: %w", path, err)
	}
	defer db.Close()
	var n, size int
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(historyBucket)
		if b == nil {
			return errors.New("no history bucket")
		}
		c := b.Cursor()
		for k, v := c.Seek(binary.BigEndian.AppendUint64(nil, from+1)); len(k) == 8 && binary.BigEndian.Uint64(k) <= to; k, v = c.Next() {
			n++
			size += len(v)
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("bench: %s: %w", path, err)
	}
	if n == 0 {
		return 0, 0, fmt.Errorf("bench: %s holds no history record of epochs %d to %d", path, from+1, to)
	}
	return n, float64(size) / float64(n), nil
}
