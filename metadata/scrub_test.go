package metadata

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/internal/boltcheck"
	"github.com/metalog/metalog/schema"
)

// damageKind returns the kind of the damage err, failing when it is not
// one.
func damageKind(t *testing.T, err error) string {
	t.Helper()
	var d *boltcheck.Error
	if !errors.As(err, &d) || !errors.Is(err, ErrDamaged) {
		t.Fatalf("damage %v (%T), want a *boltcheck.Error matching ErrDamaged", err, err)
	}
	return d.Kind
}

func scrub(t *testing.T, sm *StateMachine) ScrubResult {
	t.Helper()
	res, err := NewScrubber(sm, ScrubConfig{BytesPerSecond: -1}).Scrub(context.Background())
	if err != nil {
		t.Fatalf("Scrub: %v", err)
	}
	return res
}

func TestScrubCleanStore(t *testing.T) {
	sm, a := loadedSM(t, 300)
	res := scrub(t, sm)
	if res.Damage != nil {
		t.Fatalf("a clean store: %v", res.Damage)
	}
	if !res.Compared || res.Index != a.index || res.Epoch != sm.Current().Epoch {
		t.Errorf("scrub at index %d epoch %d compared %v, want index %d epoch %d compared", res.Index, res.Epoch, res.Compared, a.index, sm.Current().Epoch)
	}
	// The keyspace, 300 tables, one history record per epoch, the meta values.
	if res.Values < 1+300+300 || res.Bytes == 0 {
		t.Errorf("%d values of %d bytes read, want every one", res.Values, res.Bytes)
	}
	m := sm.flusher.metrics
	if c, d := testutil.ToFloat64(m.scrubs.WithLabelValues("clean")), testutil.ToFloat64(m.Corruptions); c != 1 || d != 0 {
		t.Errorf("clean scrubs %v, corruptions %v; want 1, 0", c, d)
	}
	if testutil.ToFloat64(m.lastScrub) == 0 {
		t.Error("the last scrub's time is not set")
	}
}

// flipStoredTable changes one byte of table t's stored value without
// sealing it again, as a bad disk would.
func flipStoredTable(t *testing.T, sm *StateMachine, table string) {
	t.Helper()
	err := sm.store.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(familyBuckets[familyTables]).Bucket([]byte("shop"))
		v := append([]byte(nil), b.Get([]byte(table))...)
		v[len(v)/2] ^= 0x20
		return b.Put([]byte(table), v)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestScrubFindsADamagedValueAndRepairs(t *testing.T) {
	sm, a := loadedSM(t, 300)
	flipStoredTable(t, sm, "t_123")
	res := scrub(t, sm)
	if kind := damageKind(t, res.Damage); kind != DamageChecksum || !strings.Contains(res.Damage.Error(), "t_123") || !strings.Contains(res.Damage.Error(), sm.store.path) {
		t.Fatalf("damage %v (kind %s), want a checksum damage naming t_123 and the file", res.Damage, kind)
	}
	if c := testutil.ToFloat64(sm.flusher.metrics.Corruptions); c != 1 {
		t.Errorf("corruptions %v, want 1", c)
	}
	// Changes applied but not flushed when the repair runs are kept.
	a.apply(Command{Text: "CREATE TABLE shop.before_repair (id int PRIMARY KEY)"})
	aside, err := NewScrubber(sm, ScrubConfig{}).Repair(DamageChecksum)
	if err != nil {
		t.Fatalf("Repair: %v", err)
	}
	if _, err := os.Stat(aside); err != nil || !strings.HasPrefix(filepath.Base(aside), "schema.db.damaged-") {
		t.Fatalf("the damaged file moved aside to %s: %v", aside, err)
	}
	if r := testutil.ToFloat64(sm.flusher.metrics.Rebuilds.WithLabelValues(DamageChecksum)); r != 1 {
		t.Errorf("rebuilds{reason=checksum} %v, want 1", r)
	}
	if res := scrub(t, sm); res.Damage != nil || !res.Compared {
		t.Fatalf("scrub after the repair: %v (compared %v)", res.Damage, res.Compared)
	}
	// The rewritten store takes flushes, and loads as the applied state.
	a.apply(Command{Text: "CREATE TABLE shop.after_repair (id int PRIMARY KEY)"})
	if err := sm.flusher.flush(); err != nil {
		t.Fatal(err)
	}
	want := sm.Current()
	dir := filepath.Dir(sm.store.path)
	if err := sm.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(Config{Dir: dir})
	if err != nil {
		t.Fatalf("reopen after the repair: %v", err)
	}
	defer again.Close()
	got := again.Current()
	if got.Index != want.Index || got.Epoch != want.Epoch || got.Schema.Digest() != want.Schema.Digest() || got.Schema.TableCount() != 302 {
		t.Fatalf("reopened at index %d epoch %d with %d tables, want index %d epoch %d, the same schema, 302 tables",
			got.Index, got.Epoch, got.Schema.TableCount(), want.Index, want.Epoch)
	}
	if _, err := again.History(got.Epoch-2, got.Epoch, 0); err != nil {
		t.Errorf("history of the last epochs after the repair: %v", err)
	}
}

// TestScrubFindsADigestMismatch: a store whose seals and summary agree
// but whose schema is not the one the member applied at its epoch.
func TestScrubFindsADigestMismatch(t *testing.T) {
	sm, _ := loadedSM(t, 50)
	err := sm.store.db.Update(func(tx *bolt.Tx) error {
		var a arena
		other := &schema.Table{Keyspace: "shop", Name: "t_7", ID: schema.TableID(1, 0),
			Columns: []schema.Column{{Name: "id", Type: schema.TypeInt, Kind: schema.PartitionKey}}, PartitionKey: []string{"id"}}
		if err := sealed(tx, familyBuckets[familyTables], []byte("shop")).put(&a, []byte("t_7"), func(b []byte) []byte { return schema.AppendTable(b, other) }); err != nil {
			return err
		}
		m, sum, err := loadTx(tx, nil)
		if err != nil {
			return err
		}
		sum.digest = m.Schema.Digest()
		return putSummary(sealed(tx, bucketMeta), &a, sum)
	})
	if err != nil {
		t.Fatal(err)
	}
	res := scrub(t, sm)
	if kind := damageKind(t, res.Damage); kind != DamageDigest || !strings.Contains(res.Damage.Error(), "does not match the schema this member applied") {
		t.Fatalf("damage %v (kind %s), want a digest damage against the applied schema", res.Damage, kind)
	}
}

func TestScrubFindsASummaryMismatch(t *testing.T) {
	sm, _ := loadedSM(t, 50)
	err := sm.store.db.Update(func(tx *bolt.Tx) error {
		var a arena
		return sealed(tx, bucketKeyspaces).put(&a, []byte("extra"), func(b []byte) []byte {
			return schema.AppendKeyspace(b, &schema.Keyspace{Name: "extra", DurableWrites: true, Replication: schema.Replication{
				Class: "org.apache.cassandra.locator.SimpleStrategy", Options: map[string]string{"replication_factor": "1"}}})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if kind := damageKind(t, scrub(t, sm).Damage); kind != DamageDigest {
		t.Fatalf("kind %s, want %s", kind, DamageDigest)
	}
}

// TestScrubStopsWithItsContext: a scrub at a budget it would need hours
// for ends when its context does, as failed.
func TestScrubStopsWithItsContext(t *testing.T) {
	sm, _ := loadedSM(t, 2000)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := NewScrubber(sm, ScrubConfig{BytesPerSecond: 1}).Scrub(ctx)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Scrub: %v, want context.Canceled", err)
	}
	if f := testutil.ToFloat64(sm.flusher.metrics.scrubs.WithLabelValues("failed")); f != 1 {
		t.Errorf("failed scrubs %v, want 1", f)
	}
}

// TestRepairBusy: a repair refuses while the published state is not the
// one last handed to the flusher.
func TestRepairBusy(t *testing.T) {
	sm, _ := loadedSM(t, 10)
	sm.flusher.mu.Lock()
	sm.flusher.pending.index--
	sm.flusher.mu.Unlock()
	if _, err := NewScrubber(sm, ScrubConfig{}).Repair(DamageChecksum); !errors.Is(err, ErrRepairBusy) {
		t.Fatalf("Repair: %v, want ErrRepairBusy", err)
	}
}

// BenchmarkScrub: the cost of a scrub without its pauses, per store size
// (its bytes per operation are the store's values).
func BenchmarkScrub(b *testing.B) {
	for _, size := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("tables=%d", size), func(b *testing.B) {
			sm, _ := loadedSM(b, size)
			s := NewScrubber(sm, ScrubConfig{BytesPerSecond: -1})
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				res, err := s.Scrub(context.Background())
				if err != nil || res.Damage != nil {
					b.Fatal(err, res.Damage)
				}
				b.SetBytes(res.Bytes)
			}
		})
	}
}
