package metadata

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/snapshot"
)

// storeDump returns every key and value of sm's store whose bucket path
// starts with one of prefixes (all when none), by path
// ("tables/shop/users").
func storeDump(t *testing.T, sm *StateMachine, prefixes ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	var dump func(path string, b *bolt.Bucket) error
	dump = func(path string, b *bolt.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				return dump(path+"/"+string(k), b.Bucket(k))
			}
			out[path+"/"+string(k)] = string(v)
			return nil
		})
	}
	err := sm.store.db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			for _, p := range prefixes {
				if string(name) == p {
					return dump(string(name), b)
				}
			}
			if len(prefixes) > 0 {
				return nil
			}
			return dump(string(name), b)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// objectBuckets are the buckets holding keyspaces, schema objects and
// remembered requests.
var objectBuckets = []string{"keyspaces", "types", "tables", "indexes", "functions", "requests"}

// TestRestoreWritesWhatApplyWrites: the store a snapshot restore writes
// from the snapshot's records holds, key for key and byte for byte, the
// keyspaces, objects and requests that applying the DDL wrote, functions
// included.
func TestRestoreWritesWhatApplyWrites(t *testing.T) {
	src, a, _ := richSM(t, Config{})
	defer src.Close()
	r := a.apply(setGuardrails(t, "user_defined_functions_enabled", "true", "materialized_views_enabled", "true"), Command{Text: `CREATE FUNCTION shop.f (a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;';
		CREATE FUNCTION shop.f (a text) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return 1;';
		CREATE MATERIALIZED VIEW shop.by_n AS SELECT * FROM shop.users WHERE n IS NOT NULL AND id IS NOT NULL PRIMARY KEY (n, id)`})
	for i, res := range r {
		if res.Err != nil {
			t.Fatalf("setup command %d: %v", i, res.Err)
		}
	}
	if err := src.flusher.flush(); err != nil {
		t.Fatal(err)
	}
	captured, err := src.Capture(a.index)()
	if err != nil {
		t.Fatal(err)
	}
	want := storeDump(t, src, objectBuckets...)
	for _, key := range []string{"functions/shop/f(int)", "tables/shop/by_n", "indexes/shop/tag_idx", "requests/ok"} {
		if _, ok := want[key]; !ok {
			t.Fatalf("test setup: the source store has no %s (it has %v)", key, want)
		}
	}
	for name, data := range map[string][]byte{"store": captured, "record stream": recordStream(src.Current(), a.index)} {
		t.Run(name, func(t *testing.T) {
			dst := openSM(t, t.TempDir())
			defer dst.Close()
			if err := dst.Restore(a.index, data); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, storeDump(t, dst, objectBuckets...)); d != "" {
				t.Fatalf("restored store (-applied +restored):\n%s", d)
			}
			sameMetadata(t, src.Current(), dst.Current())
		})
	}
}

// TestRestoreOfABadRecordChangesNothing: a record stream whose checksum is
// right but one table record of which does not decode is refused with an
// error naming the table, after the store transaction has put the other
// records: it rolls back, leaving the store exactly as it was.
func TestRestoreOfABadRecordChangesNothing(t *testing.T) {
	sm, _, _ := richSM(t, Config{})
	defer sm.Close()
	if err := sm.flusher.flush(); err != nil {
		t.Fatal(err)
	}
	before, published := storeDump(t, sm), sm.Current()

	other, b, _ := richSM(t, Config{})
	b.apply(Command{Text: "CREATE TABLE other.more (id int PRIMARY KEY)"})
	good := recordStream(other.Current(), b.index)
	other.Close()
	// shop.users' column tags set<text>: make the set's type code unknown
	// and recompute the checksum.
	at := bytes.Index(good, []byte{4, 't', 'a', 'g', 's', 33})
	if at < 0 || bytes.Count(good, []byte{4, 't', 'a', 'g', 's', 33}) != 1 {
		t.Fatal("test setup: column tags not found once in the snapshot")
	}
	bad := bytes.Clone(good[:len(good)-sha256.Size])
	bad[at+5] = 0x7e
	sum := sha256.Sum256(bad)
	bad = append(bad, sum[:]...)

	err := sm.Restore(b.index, bad)
	if !errors.Is(err, snapshot.ErrCorrupt) || errors.Is(err, snapshot.ErrChecksum) || !strings.Contains(err.Error(), `"shop.users"`) {
		t.Fatalf("Restore: %v, want a corrupt-snapshot error naming shop.users", err)
	}
	if sm.Current() != published {
		t.Fatal("a failed restore published new metadata")
	}
	if d := cmp.Diff(before, storeDump(t, sm)); d != "" {
		t.Fatalf("store changed by a failed restore (-before +after):\n%s", d)
	}
	// The transaction rolled back cleanly: the good snapshot restores.
	if err := sm.Restore(b.index, good); err != nil {
		t.Fatal(err)
	}
	if _, ok := storeDump(t, sm, "tables")["tables/other/more"]; !ok {
		t.Fatal("the good snapshot's table other.more is not in the store")
	}
}

// TestRestoreForgetsRequestsPastTheLimit: a snapshot holding more
// requests than MaxRememberedRequests (written by a build with a higher
// limit) restores the newest ones, in memory and in the store alike.
func TestRestoreForgetsRequestsPastTheLimit(t *testing.T) {
	c := snapshot.Contents{Index: 7, Epoch: 3}
	for i := range MaxRememberedRequests + 2 {
		c.Requests = append(c.Requests, snapshot.Request{ID: fmt.Sprintf("r%05d", i),
			Record: AppendRequestRecord(nil, RequestRecord{Index: uint64(i + 1)})})
	}
	dir := t.TempDir()
	sm := openSM(t, dir)
	if err := sm.Restore(7, snapshot.Encode(nil, &c)); err != nil {
		t.Fatal(err)
	}
	check := func(sm *StateMachine) {
		t.Helper()
		ids := sm.Current().Requests.IDs()
		if len(ids) != MaxRememberedRequests || ids[0] != "r00002" {
			t.Fatalf("%d requests from %s, want %d from r00002", len(ids), ids[0], MaxRememberedRequests)
		}
	}
	check(sm)
	stored := storeDump(t, sm, "requests")
	if _, ok := stored["requests/r00001"]; len(stored) != MaxRememberedRequests || ok {
		t.Fatalf("store holds %d requests (r00001: %v), want %d without r00001", len(stored), ok, MaxRememberedRequests)
	}
	if err := sm.Close(); err != nil {
		t.Fatal(err)
	}
	re := openSM(t, dir)
	defer re.Close()
	check(re)
}
