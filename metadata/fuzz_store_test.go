package metadata

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/internal/boltcheck"
)

// seedPageSize is the page size of the seed store: small pages make a
// small file for the fuzzer to mutate, and more page headers in it.
const seedPageSize = 512

// seedStore builds a small sealed schema store (guardrails, a keyspace
// with a type, tables and an index, remembered request ids, history) and
// returns its bytes, cut to the pages in use and their page size.
func seedStore(tb testing.TB) ([]byte, int) {
	tb.Helper()
	dir := tb.TempDir()
	path := filepath.Join(dir, storeFile)
	// A file created with small pages keeps them: the store opens it.
	db, err := bolt.Open(path, 0o600, &bolt.Options{PageSize: seedPageSize})
	if err != nil {
		tb.Fatal(err)
	}
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
	// bbolt reads the first 4 KiB of a file to find its page size.
	if err := os.Truncate(path, 4096); err != nil {
		tb.Fatal(err)
	}
	sm, err := Open(Config{Dir: dir})
	if err != nil {
		tb.Fatal(err)
	}
	g := guardrails.Defaults()
	g.TablesWarnThreshold = 500
	a := &applier{t: tb, sm: sm}
	a.apply(
		Command{Kind: KindSetGuardrails, Guardrails: guardrails.AppendSettings(nil, g)},
		Command{RequestID: "r-1", Text: ksDDL + "; CREATE TYPE shop.addr (street text, city text)"},
		Command{RequestID: "r-2", Text: "CREATE TABLE shop.users (id int PRIMARY KEY, name text, home frozen<addr>)"},
		Command{Text: "CREATE INDEX ON shop.users (name); CREATE TABLE shop.orders (id int, line int, PRIMARY KEY (id, line))"},
		Command{Text: "CREATE TABLE shop.scratch (id int PRIMARY KEY); DROP TABLE shop.scratch"},
	)
	if err := sm.Close(); err != nil {
		tb.Fatal(err)
	}
	sum, err := boltcheck.Verify(path)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b[:max(4096, int(sum.Pages)*sum.PageSize)], sum.PageSize
}

// storeDamages are damaged copies of the store b of page size ps: each
// page's header changed (type, element count) and zeroed, every place a
// known name or key is stored changed, the file cut short, and a
// fixed-seed sample of changed bytes.
func storeDamages(b []byte, ps int) [][]byte {
	var out [][]byte
	xor := func(off int, mask byte) {
		c := bytes.Clone(b)
		c[off] ^= mask
		out = append(out, c)
	}
	for p := 0; p+16 <= len(b); p += ps {
		xor(p+8, 0x12)  // page flags
		xor(p+10, 0x01) // element count
		c := bytes.Clone(b)
		clear(c[p:min(p+ps, len(c))])
		out = append(out, c)
	}
	for _, name := range []string{"shop", "users", "orders", "addr", "users_name_idx", "summary", "format", "guardrails", "r-1", "history_name"} {
		for i := 0; ; {
			j := bytes.Index(b[i:], []byte(name))
			if j < 0 {
				break
			}
			at := i + j
			xor(at, 0x01)                // the name (a key, or inside a value)
			xor(at+len(name), 0x04)      // what follows it
			if at+len(name)+8 < len(b) { // a length or a seal further on
				xor(at+len(name)+8, 0x40)
			}
			i = at + len(name)
		}
	}
	for _, n := range []int{0, 100, ps, 2*ps + 7, len(b) / 2, len(b) - 1} {
		out = append(out, bytes.Clone(b[:n]))
	}
	rng := rand.New(rand.NewPCG(30, 2))
	for range 64 {
		xor(rng.IntN(len(b)), byte(1<<rng.IntN(8)))
	}
	// A meta page naming more pages than the file holds, checksum fixed
	// up so that only the count is wrong.
	c := bytes.Clone(b)
	binary.LittleEndian.PutUint64(c[16+40:], uint64(len(b)/ps+5))
	return append(out, c)
}

// FuzzStoreLoad opens and loads arbitrary bytes as schema.db: the store
// must never panic (nor fault), and every error it returns names the
// file, since the member's refusal to start shows it to the operator.
func FuzzStoreLoad(f *testing.F) {
	b, ps := seedStore(f)
	f.Add(b)
	for _, d := range storeDamages(b, ps) {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, storeFile), data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := OpenStore(dir)
		if err != nil {
			if !strings.Contains(err.Error(), storeFile) {
				t.Fatalf("OpenStore: the error does not name %s: %v", storeFile, err)
			}
			return
		}
		defer s.Close()
		m, err := s.Load()
		if err != nil {
			if !strings.Contains(err.Error(), storeFile) {
				t.Fatalf("Load: the error does not name %s: %v", storeFile, err)
			}
			return
		}
		if m == nil {
			t.Fatal("Load returned neither metadata nor an error")
		}
	})
}

// TestSeedStoreLoads: the fuzz seed is a sound store, and each damaged
// copy of it is either refused, or loads exactly what the sound one
// holds (a damage in a page no longer in use), or loads an older state
// that is whole (a meta page lost: bbolt reads the previous transaction).
func TestSeedStoreLoads(t *testing.T) {
	b, ps := seedStore(t)
	if len(b)/ps < 8 {
		t.Fatalf("the seed store has %d pages, expected branch, leaf and bucket pages", len(b)/ps)
	}
	want, err := loadBytes(t, b)
	if err != nil {
		t.Fatal(err)
	}
	refused, older, ds := 0, 0, storeDamages(b, ps)
	for i, d := range ds {
		got, err := loadBytes(t, d)
		if err != nil {
			refused++
			continue
		}
		if got.Index < want.Index {
			// An older transaction's tree (a meta page lost): a store
			// behind the log, which a start replays the log onto.
			older++
			continue
		}
		if got.Epoch != want.Epoch || got.Index != want.Index || got.Schema.Digest() != want.Schema.Digest() ||
			got.Guardrails != want.Guardrails || got.GuardrailsSet != want.GuardrailsSet || got.Requests.Len() != want.Requests.Len() {
			t.Errorf("damaged seed %d loads epoch %d index %d, %d requests, not epoch %d index %d, %d requests (or another schema or guardrails)",
				i, got.Epoch, got.Index, got.Requests.Len(), want.Epoch, want.Index, want.Requests.Len())
		}
	}
	t.Logf("%d of %d damaged seeds refused, %d load an older state, the others the sound store's metadata", refused, len(ds), older)
}

// loadBytes opens and loads b as schema.db.
func loadBytes(t *testing.T, b []byte) (*ClusterMetadata, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, storeFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := OpenStore(dir)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Load()
}
