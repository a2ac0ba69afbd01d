package metadata

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/internal/durable"
)

// ErrRepairBusy is returned by Scrubber.Repair when the state machine
// is between publishing an applied state and handing it to the flusher,
// or rebuilding (BeginRebuild): the state it would write is not the one
// the flusher goes on from. Try again a moment later.
var ErrRepairBusy = errors.New("metadata: the state machine is applying or rebuilding; repair later")

// Repair replaces a damaged live store with one written from the state
// machine's metadata, which came from the log: the damaged file is not
// written in place (a page of it may be bad) but moved aside, to
// schema.db.damaged-<UTC time> beside it, for an operator to look at,
// and a fresh file takes its place. It returns the path of the file
// moved aside.
//
// While it runs no flush does (it holds the flusher's lock); Apply goes
// on, its changes pending until the fresh file is in place. The fresh
// file holds the history this member keeps in memory (the latest
// records); older records of the damaged file are not copied, so history
// reads start later afterwards, as after pruning. On an error the
// damaged file stays the store and the changes stay pending; the member
// is as before. It counts metalog_store_rebuilds_total{reason=kind}.
func (s *Scrubber) Repair(kind string) (string, error) {
	sm, f := s.sm, s.sm.flusher
	f.writeMu.Lock()
	defer f.writeMu.Unlock()
	m, taken, err := f.takeAt(sm.Current())
	if err != nil {
		return "", err
	}
	aside := DamagedName(sm.store.path, s.now())
	var st historyState
	err = sm.store.rewrite(m, aside, func(tx *bolt.Tx, a *arena, m *ClusterMetadata) (err error) {
		st, err = sm.history.replaceTx(tx, a, m.Epoch)
		return err
	})
	f.mu.Lock()
	if err != nil {
		// The store is the damaged file still: what was pending stays.
		taken.merge(f.pending)
		f.pending = taken
		f.mu.Unlock()
		return "", fmt.Errorf("metadata: repair schema store %s: %w", sm.store.path, err)
	}
	f.failed = nil
	f.mu.Unlock()
	f.generation.Add(1)
	sm.history.repaired(st)
	f.metrics.Rebuilds.WithLabelValues(kind).Inc()
	sm.logger.Info("schema store rewritten from the applied metadata; the damaged file is kept aside",
		"aside", aside, "index", m.Index, "epoch", m.Epoch, "keyspaces", m.Schema.KeyspaceCount(), "tables", m.Schema.TableCount())
	return aside, nil
}

// takeAt takes the pending batch, leaving an empty one, if the last state
// handed to the flusher is cur: the store plus that batch is then cur,
// and cur is what a rewrite writes. Changes staged afterwards are those
// after cur. Called with writeMu held, so the batch is not being written.
func (f *flusher) takeAt(cur *ClusterMetadata) (*ClusterMetadata, *batch, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pending.index != cur.Index {
		return nil, nil, fmt.Errorf("%w (published index %d, staged %d)", ErrRepairBusy, cur.Index, f.pending.index)
	}
	taken := f.pending
	f.pending = newBatch()
	f.pending.index, f.pending.epoch, f.pending.digest = taken.index, taken.epoch, taken.digest
	return cur, taken, nil
}

// repaired installs the history state of a repair that committed. Unlike
// a rebuild's (replaced), the state is the same: the records in memory
// stay, those not flushed yet included.
func (h *historyLog) repaired(st historyState) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.oldest, h.flushed, h.gap = st.oldest, st.flushed, st.gap
}

// rewrite writes m into a fresh file beside the store (schema.db.repair),
// with history last, then moves the store's file to aside and the fresh
// one in its place, and switches to it.
func (s *Store) rewrite(m *ClusterMetadata, aside string, history func(*bolt.Tx, *arena, *ClusterMetadata) error) error {
	tmp := s.path + ".repair"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	fresh, err := openStoreFile(tmp)
	if err != nil {
		return err
	}
	_, err = fresh.replaceAll(metadataObjects(m), func() (*ClusterMetadata, error) { return m, nil }, history)
	if cerr := fresh.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.swap(tmp, aside)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// swap moves the store's file to aside and the file fresh to its path,
// opens it and closes the old one (install). If the fresh file cannot be
// opened the old one stays the store.
func (s *Store) swap(fresh, aside string) error {
	n, err := openStoreFile(fresh)
	if err != nil {
		return err
	}
	if err := s.install(n, aside); err != nil {
		n.Close()
		return err
	}
	return nil
}

// install makes n, a store open on a file beside s's, the store: it
// moves s's file to aside (""; n's file takes its place), n's file to
// s's path, switches to n's handle, and syncs the directory. The old file
// is closed on a goroutine of its own, once the read transactions still
// on it end (a scrub's may take a while): install does not wait for them,
// Close does. On an error s's file stays the store and n stays open,
// under its own name.
func (s *Store) install(n *Store, aside string) error {
	s.mu.Lock()
	if aside != "" {
		if err := os.Rename(s.path, aside); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	if err := os.Rename(n.path, s.path); err != nil {
		if aside != "" {
			err = errors.Join(err, os.Rename(aside, s.path))
		}
		s.mu.Unlock()
		return err
	}
	old := s.db
	s.db = n.db
	s.closing.Add(1)
	s.mu.Unlock()
	oldPath := cmp.Or(aside, s.path)
	go func() {
		defer s.closing.Done()
		// The old file may be damaged: closing it only unmaps it.
		_ = guardedRead(oldPath, old.Close)
	}()
	return durable.SyncDir(filepath.Dir(s.path))
}
