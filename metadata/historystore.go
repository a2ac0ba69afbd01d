package metadata

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The history bucket holds one encoded Record per epoch, keyed by the
// epoch (8 bytes, big-endian, so keys sort by epoch). The meta bucket's
// history_gap key, when present, holds the epochs (from, to] a rebuild
// from a snapshot left missing, until a peer's records fill them.
var (
	bucketHistory = []byte("history")
	keyHistoryGap = []byte("history_gap")
)

func epochKey(epoch uint64) []byte { return binary.BigEndian.AppendUint64(nil, epoch) }

// historyBounds returns the oldest epoch with a stored record (0 if none)
// and the stored gap.
func (s *Store) historyBounds() (oldest uint64, gap epochRange, err error) {
	err = s.view(func(tx *bolt.Tx) error {
		if k, _ := tx.Bucket(bucketHistory).Cursor().First(); len(k) == 8 {
			oldest = binary.BigEndian.Uint64(k)
		}
		gap, err = readGap(sealed(tx, bucketMeta))
		return err
	})
	return oldest, gap, err
}

// readGap reads the stored gap (empty if none).
func readGap(meta *vault) (epochRange, error) {
	v, err := meta.get(keyHistoryGap)
	if err != nil || v == nil {
		return epochRange{}, err
	}
	if len(v) != 16 {
		return epochRange{}, undecodable("meta key \"history_gap\"", fmt.Errorf("a gap of %d bytes", len(v)))
	}
	return epochRange{binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:])}, nil
}

// writeGap stores gap, or deletes it when it is empty.
func writeGap(meta *vault, a *arena, gap epochRange) error {
	if gap.empty() {
		return meta.b.Delete(keyHistoryGap)
	}
	return meta.put(a, keyHistoryGap, func(b []byte) []byte {
		return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(b, gap.from), gap.to)
	})
}

// readHistory decodes the stored records of the epochs in (from, to],
// oldest first, at most max when max > 0.
func (s *Store) readHistory(from, to uint64, max int) ([]*Record, error) {
	var out []*Record
	err := s.eachStoredRecord(from, to, func(epoch uint64, v []byte) (bool, error) {
		if max > 0 && len(out) >= max {
			return false, nil
		}
		r, err := decodeStoredRecord(epoch, v)
		if err != nil {
			return false, err
		}
		out = append(out, r)
		return true, nil
	})
	return out, err
}

// eachStoredRecord hands fn the epoch and stored bytes (valid only during
// the call) of each record of the epochs in (from, to], oldest first,
// until fn returns false or an error.
func (s *Store) eachStoredRecord(from, to uint64, fn func(epoch uint64, v []byte) (bool, error)) error {
	return s.view(func(tx *bolt.Tx) error {
		hb := sealed(tx, bucketHistory)
		c := hb.b.Cursor()
		for k, raw := c.Seek(epochKey(from + 1)); k != nil; k, raw = c.Next() {
			epoch := binary.BigEndian.Uint64(k)
			if epoch > to {
				return nil
			}
			v, err := hb.open(k, raw)
			if err != nil {
				return withFile(err, s.path)
			}
			if more, err := fn(epoch, v); err != nil || !more {
				return err
			}
		}
		return nil
	})
}

// readHistoryBack hands take the stored records from epoch to down to
// oldest, newest first, until take returns false.
func (s *Store) readHistoryBack(to, oldest uint64, take func(*Record) bool) error {
	return s.view(func(tx *bolt.Tx) error {
		hb := sealed(tx, bucketHistory)
		c := hb.b.Cursor()
		k, raw := c.Seek(epochKey(to))
		if k == nil || binary.BigEndian.Uint64(k) > to {
			k, raw = c.Prev()
		}
		for ; k != nil; k, raw = c.Prev() {
			epoch := binary.BigEndian.Uint64(k)
			if epoch < oldest {
				return nil
			}
			v, err := hb.open(k, raw)
			if err != nil {
				return withFile(err, s.path)
			}
			r, err := decodeStoredRecord(epoch, v)
			if err != nil {
				return err
			}
			if !take(r) {
				return nil
			}
		}
		return nil
	})
}

// decodeStoredRecord decodes the record stored under epoch.
func decodeStoredRecord(epoch uint64, v []byte) (*Record, error) {
	r, err := DecodeRecord(v)
	if err == nil && r.Epoch != epoch {
		err = fmt.Errorf("%w: the record stored under epoch %d is of epoch %d", ErrBadRecord, epoch, r.Epoch)
	}
	if err != nil {
		return nil, fmt.Errorf("metadata: history of epoch %d: %w (repair the member to rebuild it)", epoch, err)
	}
	return r, nil
}

// writeHistory puts the records of a batch and deletes those before keep.
// Encodings are made in a, which must live until the commit.
func writeHistory(tx *bolt.Tx, a *arena, records []*Record, keep uint64) error {
	hb := sealed(tx, bucketHistory)
	// Epochs only ever append: full pages halve the bytes written (and
	// kept) against bbolt's default half-full split.
	hb.b.FillPercent = 1.0
	for _, r := range records {
		if r.Epoch < keep {
			continue
		}
		k := a.encode(func(b []byte) []byte { return binary.BigEndian.AppendUint64(b, r.Epoch) }) // epochKey, in the arena
		if err := hb.put(a, k, func(b []byte) []byte { return AppendRecord(b, r) }); err != nil {
			return fmt.Errorf("history of epoch %d: %w", r.Epoch, err)
		}
	}
	if keep == 0 {
		return nil
	}
	return deleteHistoryBefore(hb.b, keep)
}

// deleteHistoryBefore deletes the records of the epochs before keep.
func deleteHistoryBefore(hb *bolt.Bucket, keep uint64) error {
	c := hb.Cursor()
	// Seek again after each delete: a bbolt cursor may skip the key after
	// a deleted one.
	for k, _ := c.First(); k != nil && binary.BigEndian.Uint64(k) < keep; k, _ = c.First() {
		if err := c.Delete(); err != nil {
			return fmt.Errorf("prune history of epoch %d: %w", binary.BigEndian.Uint64(k), err)
		}
	}
	return nil
}

// deleteHistoryAfter deletes the records of the epochs after epoch and
// returns the newest epoch left (0 if none).
func deleteHistoryAfter(hb *bolt.Bucket, epoch uint64) (uint64, error) {
	c := hb.Cursor()
	for k, _ := c.Seek(epochKey(epoch + 1)); k != nil; k, _ = c.Seek(epochKey(epoch + 1)) {
		if err := c.Delete(); err != nil {
			return 0, fmt.Errorf("drop history of epoch %d: %w", binary.BigEndian.Uint64(k), err)
		}
	}
	if k, _ := c.Last(); k != nil {
		return binary.BigEndian.Uint64(k), nil
	}
	return 0, nil
}
