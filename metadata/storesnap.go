package metadata

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/internal/boltpack"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/snapshot"
)

// A member's snapshot is its schema store as a whole file (a store
// snapshot, snapshot.EncodeStore): what the receiver writes beside its
// store, checks, renames into place and loads, instead of rebuilding a
// store from records. The file is written from the captured metadata, not
// copied from the store's file, which lags the applied state by the flush
// window: it holds exactly the metadata at the snapshot's index, in the
// buckets, keys and sealed values the store itself writes (storeImage),
// with its pages filled completely. It leaves the history out: the
// receiver keeps its own (historyLog.replaceTx), as a restore always did.

// SnapshotWork is what data, a snapshot Capture took or Restore takes,
// stands for in raftlog's snapshot schedule (raftlog.SnapshotSizer): a
// store snapshot's file size, which encoding one costs in proportion to,
// not its compressed length; other data's length.
func SnapshotWork(data []byte) int {
	if h, err := snapshot.PeekStore(data); err == nil && h.Size <= math.MaxInt32 {
		return int(h.Size)
	}
	return len(data)
}

// storeImage returns the bytes of a schema store file holding m at log
// index index and nothing else: the summary records index, and the
// history bucket is empty. sizeHint is the expected size. It walks all of
// m, encoding every object as the store does.
func storeImage(m *ClusterMetadata, index uint64, sizeHint int) ([]byte, error) {
	f := boltpack.New(os.Getpagesize(), sizeHint)
	var scratch []byte
	buckets := slices.SortedFunc(slices.Values(storeBuckets()), bytes.Compare)
	for _, name := range buckets {
		b, err := f.Root().Bucket(name)
		if err != nil {
			return nil, err
		}
		scope := scopeSum(name)
		switch string(name) {
		case string(bucketMeta):
			err = imageMeta(b, scope, m, index, &scratch)
		case string(bucketKeyspaces):
			err = imageKeyspaces(b, scope, m, &scratch)
		case string(bucketRequests):
			err = imageRequests(b, scope, m.Requests, &scratch)
		case string(bucketHistory):
			// Empty: the receiver keeps its own (carryHistory).
		default:
			err = imageFamily(b, name, m.Schema, &scratch)
		}
		if err == nil {
			err = b.Close()
		}
		if err != nil {
			return nil, fmt.Errorf("metadata: store file, bucket %s: %w", name, err)
		}
	}
	return f.Finish()
}

// putSealed puts under key of b what appendFn appends, sealed in the scope
// whose sum is scope; scratch is reused from call to call.
func putSealed(b *boltpack.Bucket, scope uint32, key []byte, scratch *[]byte, appendFn func([]byte) []byte) error {
	*scratch = appendSealed((*scratch)[:0], scope, key, appendFn)
	return b.Put(key, *scratch)
}

// imageMeta fills the meta bucket as putMetadata does, with the summary
// of m at index.
func imageMeta(b *boltpack.Bucket, scope uint32, m *ClusterMetadata, index uint64, scratch *[]byte) error {
	type entry struct {
		key []byte
		fn  func([]byte) []byte
	}
	entries := []entry{
		{keyFormat, appendFormat},
		{keySummary, storeSummary{index: index, epoch: m.Epoch, digest: m.Schema.Digest(), known: true}.append},
	}
	if m.GuardrailsSet {
		entries = append(entries, entry{keyGuardrails, func(b []byte) []byte { return guardrails.AppendSettings(b, m.Guardrails) }})
	}
	if m.KeyspaceGuardrails.Len() > 0 {
		entries = append(entries, entry{keyKeyspaceGuardrails, func(b []byte) []byte { return guardrails.AppendOverrides(b, m.KeyspaceGuardrails) }})
	}
	if m.History.Nonce != 0 {
		entries = append(entries, entry{keyHistoryName, func(b []byte) []byte { return appendHistoryName(b, m.History) }})
	}
	slices.SortFunc(entries, func(a, b entry) int { return bytes.Compare(a.key, b.key) })
	for _, e := range entries {
		if err := putSealed(b, scope, e.key, scratch, e.fn); err != nil {
			return err
		}
	}
	return nil
}

// imageKeyspaces fills the keyspaces bucket.
func imageKeyspaces(b *boltpack.Bucket, scope uint32, m *ClusterMetadata, scratch *[]byte) error {
	for _, k := range m.Schema.Keyspaces() {
		if err := putSealed(b, scope, []byte(k.Name), scratch, func(b []byte) []byte { return schema.AppendKeyspace(b, k) }); err != nil {
			return err
		}
	}
	return nil
}

// imageRequests fills the requests bucket, by id.
func imageRequests(b *boltpack.Bucket, scope uint32, reqs Requests, scratch *[]byte) error {
	ids := reqs.IDs()
	slices.Sort(ids)
	for _, id := range ids {
		rec, _ := reqs.Get(id)
		if err := putSealed(b, scope, []byte(id), scratch, func(b []byte) []byte { return AppendRequestRecord(b, rec) }); err != nil {
			return err
		}
	}
	return nil
}

// imageFamily fills the bucket of the family named name: one bucket per
// keyspace that has objects of the family, the objects by store key.
func imageFamily(b *boltpack.Bucket, name []byte, s schema.Schema, scratch *[]byte) error {
	f := family(slices.IndexFunc(familyBuckets[:], func(n []byte) bool { return bytes.Equal(n, name) }))
	var key []byte
	for _, k := range s.Keyspaces() {
		if f == familyTables {
			if err := imageTables(b, k, scratch, &key); err != nil {
				return err
			}
			continue
		}
		objs := familyObjects(k, f)
		if len(objs) == 0 {
			continue
		}
		kb, err := b.Bucket([]byte(k.Name))
		if err != nil {
			return err
		}
		scope := scopeSum(name, []byte(k.Name))
		for _, v := range objs {
			key = append(key[:0], objectName(v)...)
			if err := putSealed(kb, scope, key, scratch, func(b []byte) []byte { return encodeObject(b, v) }); err != nil {
				return fmt.Errorf("%s %s.%s: %w", f, k.Name, key, err)
			}
		}
		if err := kb.Close(); err != nil {
			return err
		}
	}
	return nil
}

// imageTables puts the bucket of keyspace k's tables and views into b,
// the tables' bucket, if k has any: in name order, as the keyspace's
// sorted map holds them. key is reused from call to call.
func imageTables(b *boltpack.Bucket, k *schema.Keyspace, scratch, key *[]byte) error {
	if k.TableCount()+k.ViewCount() == 0 {
		return nil
	}
	kb, err := b.Bucket([]byte(k.Name))
	if err != nil {
		return err
	}
	scope := scopeSum(familyBuckets[familyTables], []byte(k.Name))
	for t := range schema.TablesFrom(k, "") {
		*key = append((*key)[:0], t.Name...)
		if err := putSealed(kb, scope, *key, scratch, func(b []byte) []byte { return schema.AppendTable(b, t) }); err != nil {
			return fmt.Errorf("%s %s: %w", familyTables, t.QualifiedName(), err)
		}
	}
	return kb.Close()
}
