package metadata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/internal/boltcheck"
	"github.com/metalog/metalog/internal/clip"
)

// Every value the store writes is sealed: its encoding followed by a
// CRC-32C (Castagnoli) of the bucket it is in (its scope: the bucket's
// name, "tables/ks" for a keyspace's bucket of a family), its key and the
// encoding, 4 bytes little-endian. A changed byte in the value, the key or
// the name of the bucket holding it fails the check where the value is
// read; a value moved to another key or bucket fails it too.
//
// A store written before seals (no format key) is sealed in place, once,
// when it is opened (upgradeStore); damage it held before is not caught
// by the seals, only by a later difference with the log.

// sealSize is the length of a seal.
const sealSize = 4

// storeFormat is the format the store's format key records: 2, sealed
// values and a summary. Stores without the key predate seals.
const storeFormat = 2

var (
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
	// keyFormat holds storeFormat.
	keyFormat = []byte("format")
	// keySummary holds the summary (storeSummary).
	keySummary = []byte("summary")
)

// ErrDamaged is matched (errors.Is) by the errors of a damaged schema
// store: a value whose seal does not match, a record that does not
// decode, a schema that does not match its summary, a page structure
// bbolt would fail on. Move the file away and the member rebuilds it from
// its snapshot and log.
var ErrDamaged = boltcheck.ErrDamaged

// The kinds of damage (boltcheck.Error.Kind, the reason label of
// metalog_store_rebuilds_total) the store reports beside
// boltcheck.KindPages.
const (
	// DamageChecksum: a value does not match its seal.
	DamageChecksum = "checksum"
	// DamageRecord: a sealed value does not decode, or does not fit the
	// schema read so far, or a bucket or the summary is missing.
	DamageRecord = "record"
	// DamageDigest: the schema read does not match the summary's digest.
	DamageDigest = "digest"
	// DamageRead: bbolt panicked or faulted reading the file
	// (boltcheck.Guard).
	DamageRead = boltcheck.KindRead
)

// scopeSum is the CRC of a scope: the names of the buckets from the top.
func scopeSum(names ...[]byte) uint32 {
	var c uint32
	for i, n := range names {
		if i > 0 {
			c = crc32.Update(c, castagnoli, []byte{'/'})
		}
		c = crc32.Update(c, castagnoli, n)
	}
	return c
}

// sealSum is the seal of payload under key in the scope whose sum is base.
func sealSum(base uint32, key, payload []byte) uint32 {
	return crc32.Update(crc32.Update(base, castagnoli, key), castagnoli, payload)
}

// vault is a bucket of the store whose values are sealed.
type vault struct {
	b     *bolt.Bucket
	base  uint32 // scopeSum of the bucket's names
	scope string // for errors
	// pace, when not nil, paces forEach (a scrub); nil for every other
	// reader and writer.
	pace *pacer
}

// sealed returns the bucket of tx at the path names (a top-level bucket
// and optionally one nested in it), nil if it does not exist.
func sealed(tx *bolt.Tx, names ...[]byte) *vault {
	b := tx.Bucket(names[0])
	for _, n := range names[1:] {
		if b == nil {
			return nil
		}
		b = b.Bucket(n)
	}
	if b == nil {
		return nil
	}
	return inVault(b, names...)
}

// paced sets the pacer of v's forEach and returns v.
func (v *vault) paced(p *pacer) *vault {
	v.pace = p
	return v
}

// inVault is the vault of bucket b, at the path names.
func inVault(b *bolt.Bucket, names ...[]byte) *vault {
	scope := string(names[0])
	for _, n := range names[1:] {
		scope += "/" + string(n)
	}
	return &vault{b: b, base: scopeSum(names...), scope: scope}
}

// put seals what appendFn appends in a and puts it under key, which must
// stay valid until the commit too (in a, or not changed by anyone).
func (v *vault) put(a *arena, key []byte, appendFn func([]byte) []byte) error {
	start := a.begin()
	a.buf = appendSealed(a.buf, v.base, key, appendFn)
	return v.b.Put(key, a.buf[start:len(a.buf):len(a.buf)])
}

// appendSealed appends to dst what appendFn appends, then its seal under
// key in the scope whose sum is base.
func appendSealed(dst []byte, base uint32, key []byte, appendFn func([]byte) []byte) []byte {
	start := len(dst)
	dst = appendFn(dst)
	return binary.LittleEndian.AppendUint32(dst, sealSum(base, key, dst[start:]))
}

// putBytes puts a sealed copy of payload under key.
func (v *vault) putBytes(a *arena, key, payload []byte) error {
	return v.put(a, key, func(b []byte) []byte { return append(b, payload...) })
}

// get returns the payload stored under key, nil if there is none.
func (v *vault) get(key []byte) ([]byte, error) {
	raw := v.b.Get(key)
	if raw == nil {
		return nil, nil
	}
	return v.open(key, raw)
}

// open checks the seal of the stored value raw under key and returns its
// payload.
func (v *vault) open(key, raw []byte) ([]byte, error) {
	if len(raw) < sealSize {
		return nil, v.damage(key, DamageChecksum, fmt.Sprintf("a value of %d bytes has no seal", len(raw)))
	}
	payload := raw[:len(raw)-sealSize]
	if binary.LittleEndian.Uint32(raw[len(payload):]) != sealSum(v.base, key, payload) {
		return nil, v.damage(key, DamageChecksum, "the value does not match its checksum")
	}
	return payload, nil
}

// forEach hands fn the key and payload of every value (not nested
// buckets) of the vault, checking each seal.
func (v *vault) forEach(fn func(k, payload []byte) error) error {
	return v.b.ForEach(func(k, raw []byte) error {
		if err := v.pace.read(len(k) + len(raw)); err != nil {
			return err
		}
		if raw == nil {
			return v.damage(k, DamageRecord, "a nested bucket where values are expected")
		}
		p, err := v.open(k, raw)
		if err != nil {
			return err
		}
		return fn(k, p)
	})
}

// damage is the error of a damaged value under key.
func (v *vault) damage(key []byte, kind, detail string) error {
	return &boltcheck.Error{Kind: kind, Where: fmt.Sprintf("%s key %s", v.scope, clip.Quote(string(key))), Detail: detail}
}

// storeSummary is what the store's summary records: the log index and
// epoch the store covers and the digest of its schema there.
type storeSummary struct {
	index, epoch uint64
	// digest is the schema's digest; known is false in the summary an
	// upgrade of a store without one writes, until the load after it.
	digest [32]byte
	known  bool
}

// summaryLen is the length of an encoded summary.
const summaryLen = 8 + 8 + 1 + 32

func (s storeSummary) append(b []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, s.index)
	b = binary.BigEndian.AppendUint64(b, s.epoch)
	if s.known {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	return append(b, s.digest[:]...)
}

func decodeSummary(b []byte) (storeSummary, error) {
	if len(b) != summaryLen || b[16] > 1 {
		return storeSummary{}, fmt.Errorf("a summary of %d bytes", len(b))
	}
	s := storeSummary{index: binary.BigEndian.Uint64(b), epoch: binary.BigEndian.Uint64(b[8:]), known: b[16] == 1}
	copy(s.digest[:], b[17:])
	return s, nil
}

// putSummary seals and puts s into the meta bucket.
func putSummary(meta *vault, a *arena, s storeSummary) error {
	if err := meta.put(a, keySummary, s.append); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	return nil
}

// readSummary reads the summary of a sealed store, after checking the
// seal of every value of the meta bucket: the other meta keys are looked
// up by name and may be absent, so a damaged key would otherwise read as
// one never written (guardrails never set, no history name), not as
// damage.
func readSummary(meta *vault) (storeSummary, error) {
	if err := meta.forEach(func(k, p []byte) error { return nil }); err != nil {
		return storeSummary{}, err
	}
	v, err := meta.get(keySummary)
	if err != nil {
		return storeSummary{}, err
	}
	if v == nil {
		return storeSummary{}, &boltcheck.Error{Kind: DamageRecord, Where: "meta key \"summary\"", Detail: "the summary is missing"}
	}
	s, err := decodeSummary(v)
	if err != nil {
		return storeSummary{}, &boltcheck.Error{Kind: DamageRecord, Where: "meta key \"summary\"", Detail: err.Error()}
	}
	return s, nil
}

// putFormat seals and puts the store's format into the meta bucket.
func putFormat(meta *vault, a *arena) error { return meta.put(a, keyFormat, appendFormat) }

// appendFormat appends the encoding of the store's format.
func appendFormat(b []byte) []byte { return binary.BigEndian.AppendUint64(b, storeFormat) }

// sealedFormat reports whether the store of tx is sealed (it records its
// format), failing for a format it does not know or a damaged one.
func sealedFormat(tx *bolt.Tx) (bool, error) {
	meta := sealed(tx, bucketMeta)
	if meta == nil {
		return false, &boltcheck.Error{Kind: DamageRecord, Where: "bucket \"meta\"", Detail: "the bucket is missing"}
	}
	if meta.b.Get(keyFormat) == nil {
		if meta.b.Get(keySummary) != nil {
			return false, &boltcheck.Error{Kind: DamageRecord, Where: "meta key \"format\"", Detail: "the format is missing beside a summary"}
		}
		return false, nil
	}
	v, err := meta.get(keyFormat)
	if err != nil {
		return false, err
	}
	if len(v) != 8 || binary.BigEndian.Uint64(v) != storeFormat {
		return false, fmt.Errorf("the schema store has format %x, this binary reads format %d: start the version that wrote it, or move the file away to rebuild it from the raft log", v, storeFormat)
	}
	return true, nil
}

// upgradeStore seals every value of a store written before seals, in one
// transaction, and records the format and a summary of the index and
// epoch it covers (the digest follows at the first load).
func upgradeStore(tx *bolt.Tx) error {
	var a arena
	var seal func(path [][]byte, b *bolt.Bucket) error
	seal = func(path [][]byte, b *bolt.Bucket) error {
		type kv struct{ k, v []byte }
		var vals []kv
		var nested [][]byte
		err := b.ForEach(func(k, v []byte) error {
			if v == nil {
				nested = append(nested, append([]byte(nil), k...))
			} else {
				vals = append(vals, kv{append([]byte(nil), k...), append([]byte(nil), v...)})
			}
			return nil
		})
		if err != nil {
			return err
		}
		vt := inVault(b, path...)
		for _, e := range vals {
			if err := vt.putBytes(&a, e.k, e.v); err != nil {
				return err
			}
		}
		for _, n := range nested {
			if err := seal(append(path[:len(path):len(path)], n), b.Bucket(n)); err != nil {
				return err
			}
		}
		return nil
	}
	meta := tx.Bucket(bucketMeta)
	sum := storeSummary{index: getUint64(meta, keyIndex), epoch: getUint64(meta, keyEpoch)}
	for _, k := range [][]byte{keyIndex, keyEpoch} {
		if err := meta.Delete(k); err != nil {
			return err
		}
	}
	err := tx.ForEach(func(name []byte, b *bolt.Bucket) error {
		return seal([][]byte{name}, b)
	})
	if err != nil {
		return fmt.Errorf("seal the values: %w", err)
	}
	mv := inVault(meta, bucketMeta)
	if err := putFormat(mv, &a); err != nil {
		return err
	}
	return putSummary(mv, &a, sum)
}

// guardedRead runs read, turning a bbolt panic or a memory fault into a
// damage of path (boltcheck.Guard).
func guardedRead(path string, read func() error) error { return boltcheck.Guard(path, read) }

// withFile names the file in a damage that does not name one yet.
func withFile(err error, path string) error {
	var d *boltcheck.Error
	if errors.As(err, &d) && d.File == "" {
		d.File = path
	}
	return err
}

// DamagedName is the name a damaged file at path is moved aside to:
// path.damaged-<UTC time to the second>, with -2, -3 ... when that is
// taken. The file is kept for an operator to look at.
func DamagedName(path string, now time.Time) string {
	base := path + ".damaged-" + now.UTC().Format("20060102T150405Z")
	aside := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(aside); errors.Is(err, os.ErrNotExist) {
			return aside
		}
		aside = base + "-" + strconv.Itoa(i)
	}
}
