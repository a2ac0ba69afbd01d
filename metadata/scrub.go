package metadata

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/internal/boltcheck"
)

// A scrub re-reads the live store as Load does (loadTx), in one read
// transaction, so at the index its summary records: every value's seal,
// every record's decoding, the schema against the summary's digest and
// against the digest the state machine had at the summary's epoch, when
// it still remembers it (RecentDigests). It reads at a budget of bytes
// per second, sleeping between chunks of values, so that a store of
// 100,000 tables (about 50 MB) takes under a minute at the default
// budget and the flushes beside it go on: bbolt readers do not block its
// writer, and the scrub does not hold the flusher's lock. A long read
// transaction keeps the pages freed meanwhile from being reused, so the
// file may grow by what the flushes write during a scrub; and a flush
// that needs bbolt to map more than the store maps from the start
// (storeMmapSize, 1 GiB) waits for the scrub to end.

// DefaultScrubBytesPerSecond is the default read budget of a scrub:
// 4 MiB of stored keys and values per second.
const DefaultScrubBytesPerSecond = 4 << 20

// scrubChunk is how many bytes a scrub reads between two pauses.
const scrubChunk = 64 << 10

// ScrubConfig configures a Scrubber. The zero value is the defaults.
type ScrubConfig struct {
	// BytesPerSecond is the read budget of a scrub, in bytes of stored
	// keys and values per second. Default DefaultScrubBytesPerSecond;
	// negative: no limit.
	BytesPerSecond int64
}

// ScrubResult is what one scrub of the store read and found.
type ScrubResult struct {
	// Index and Epoch are the log index and epoch the store's summary
	// records: the scrub saw the store as it was there.
	Index, Epoch uint64
	// Values and Bytes are the values read and their bytes (keys
	// included).
	Values int
	Bytes  int64
	// Compared is true when the schema was compared with the digest the
	// state machine had at Epoch (it remembers the last 256 epochs).
	Compared bool
	// Duration is how long the scrub took, its pauses included.
	Duration time.Duration
	// Damage is nil for a clean store, else what is damaged: a
	// *boltcheck.Error naming the file, matching ErrDamaged.
	Damage error
}

// Scrubber scrubs and repairs the live store of a state machine. Its
// methods must not run concurrently with each other; they may run beside
// Apply and every reader.
type Scrubber struct {
	sm   *StateMachine
	rate int64 // bytes per second; <= 0: no limit
	now  func() time.Time
}

// NewScrubber returns the scrubber of sm's store.
func NewScrubber(sm *StateMachine, cfg ScrubConfig) *Scrubber {
	rate := cfg.BytesPerSecond
	if rate == 0 {
		rate = DefaultScrubBytesPerSecond
	}
	return &Scrubber{sm: sm, rate: rate, now: time.Now}
}

// Scrub reads the whole store at the scrubber's pace and reports what it
// found (ScrubResult.Damage). Its error is for a scrub that could not
// finish: ctx ended, or the store is closed. It counts the scrub
// (metalog_store_scrubs_total, metalog_store_last_scrub_timestamp_seconds)
// and a damage (metalog_store_corruptions_total).
func (s *Scrubber) Scrub(ctx context.Context) (ScrubResult, error) {
	start := s.now()
	st, metrics := s.sm.store, s.sm.flusher.metrics
	generation := s.sm.flusher.generation.Load()
	p := newPacer(ctx, s.rate, s.now)
	var m *ClusterMetadata
	var sum storeSummary
	err := guardedRead(st.path, func() error {
		return st.view(func(tx *bolt.Tx) (err error) {
			m, sum, err = scrubTx(tx, p)
			return err
		})
	})
	res := ScrubResult{Index: sum.index, Epoch: sum.epoch, Values: p.values, Bytes: p.total}
	if err == nil {
		err = sum.check(m)
	}
	if err == nil && s.sm.flusher.generation.Load() == generation {
		// Unless the store was rewritten meanwhile (a restore may reuse
		// epochs): then the digests remembered are of another state.
		res.Compared, err = againstMemory(s.sm.RecentDigests(), m, sum)
	}
	res.Duration = s.now().Sub(start)
	if err != nil && !errors.Is(err, ErrDamaged) {
		metrics.scrubs.WithLabelValues("failed").Inc()
		return res, fmt.Errorf("metadata: scrub schema store %s: %w", st.path, err)
	}
	metrics.lastScrub.Set(float64(s.now().UnixNano()) / 1e9)
	if err != nil {
		res.Damage = withFile(err, st.path)
		metrics.scrubs.WithLabelValues("damaged").Inc()
		metrics.Corruptions.Inc()
		return res, nil
	}
	metrics.scrubs.WithLabelValues("clean").Inc()
	return res, nil
}

// scrubTx reads the store of tx as loadTx does, at the pace of p, and
// also checks what a load does not read: the format, every value of the
// meta bucket and every record of the history.
func scrubTx(tx *bolt.Tx, p *pacer) (*ClusterMetadata, storeSummary, error) {
	if ok, err := sealedFormat(tx); err != nil || !ok {
		if err == nil {
			err = &boltcheck.Error{Kind: DamageRecord, Where: "meta key \"format\"", Detail: "the format is missing"}
		}
		return nil, storeSummary{}, err
	}
	m, sum, err := loadTx(tx, p)
	if err != nil {
		return nil, sum, err
	}
	meta := sealed(tx, bucketMeta).paced(p)
	if err := meta.forEach(func(k, v []byte) error { return nil }); err != nil {
		return nil, sum, err
	}
	if _, err := readGap(meta); err != nil {
		return nil, sum, err
	}
	err = sealed(tx, bucketHistory).paced(p).forEach(func(k, v []byte) error {
		if len(k) != 8 {
			return undecodable(fmt.Sprintf("history key %x", k), errors.New("a key that is not an epoch"))
		}
		if _, err := decodeStoredRecord(binary.BigEndian.Uint64(k), v); err != nil {
			return undecodable(fmt.Sprintf("history of epoch %d", binary.BigEndian.Uint64(k)), err)
		}
		return nil
	})
	return m, sum, err
}

// againstMemory compares the schema m read from the store, at the
// summary sum's epoch, with the digest the state machine had at that
// epoch, if history (RecentDigests) still has it; it reports whether it
// did.
func againstMemory(history []EpochDigest, m *ClusterMetadata, sum storeSummary) (bool, error) {
	for _, ed := range history {
		if ed.Epoch != sum.epoch {
			continue
		}
		if ed.Digest != m.Schema.Digest() {
			return true, &boltcheck.Error{Kind: DamageDigest, Where: "meta key \"summary\"", Detail: fmt.Sprintf(
				"the schema stored at epoch %d (log index %d; %d keyspaces, %d tables) does not match the schema this member applied at that epoch",
				sum.epoch, sum.index, m.Schema.KeyspaceCount(), m.Schema.TableCount())}
		}
		return true, nil
	}
	return false, nil
}

// pacer paces a reader to a budget of bytes per second and stops it when
// its context ends. A nil pacer does neither. Not safe for concurrent
// use: loadTx reads on one goroutine at a time.
type pacer struct {
	ctx    context.Context
	rate   float64 // bytes per second; <= 0: no limit
	now    func() time.Time
	start  time.Time
	total  int64 // bytes read
	owed   int64 // bytes read since the last pause
	values int
}

func newPacer(ctx context.Context, rate int64, now func() time.Time) *pacer {
	return &pacer{ctx: ctx, rate: float64(rate), now: now, start: now()}
}

// read accounts for a value of n bytes about to be read, first sleeping
// as long as the reads so far are ahead of the budget, once a chunk.
func (p *pacer) read(n int) error {
	if p == nil {
		return nil
	}
	p.values++
	p.total += int64(n)
	if p.owed += int64(n); p.owed < scrubChunk {
		return nil
	}
	p.owed = 0
	if err := p.ctx.Err(); err != nil {
		return err
	}
	if p.rate <= 0 {
		return nil
	}
	due := p.start.Add(time.Duration(float64(p.total) / p.rate * float64(time.Second)))
	wait := due.Sub(p.now())
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-p.ctx.Done():
		return p.ctx.Err()
	}
}
