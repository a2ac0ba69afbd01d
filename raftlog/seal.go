package raftlog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	bolt "go.etcd.io/bbolt"
)

// Every value of raft.db's meta, members and removed buckets is sealed
// (format 3): its encoding followed by a CRC-32C (Castagnoli) of the
// bucket's name, a '/', its key and the encoding, 4 bytes little-endian,
// as the schema store seals its values (metadata/seal.go). bbolt checks
// none of its values, and many of raft.db's still decode when a byte of
// them changes (a member id, a voter of the configuration): a changed
// byte of a value or of its key, or a value found in another bucket,
// fails the seal when the file is opened, and a key looked up by name
// that is missing while the log holds a membership is a damage too.
//
// A file of format 2 is sealed in place, once, when it is opened; one of
// format 1 when its entries have moved to the write-ahead log. Damage it
// held before is not caught by the seals. Read-only readers (Inspect,
// CheckLog) read older files as they are.

// sealSize is the length of a seal.
const sealSize = 4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sealSum is the seal of payload under key in the bucket name.
func sealSum(name, key, payload []byte) uint32 {
	c := crc32.Update(0, castagnoli, name)
	c = crc32.Update(c, castagnoli, []byte{'/'})
	c = crc32.Update(c, castagnoli, key)
	return crc32.Update(c, castagnoli, payload)
}

// vault is a bucket of raft.db whose values are sealed, or not in a file
// of a format before seals (sealed false).
type vault struct {
	b      *bolt.Bucket
	name   []byte
	sealed bool
}

// vaultOf is the top-level bucket name of tx (b nil if it is missing);
// its values are sealed if the file's format is recorded sealed.
func vaultOf(tx *bolt.Tx, name []byte) vault {
	return vault{b: tx.Bucket(name), name: name, sealed: fileSealed(tx)}
}

// fileSealed reports whether raft.db's format is recorded sealed (the
// 8 bytes of the format and a seal).
func fileSealed(tx *bolt.Tx) bool {
	meta := tx.Bucket(bucketMeta)
	return meta != nil && len(meta.Get(keyFormat)) == 8+sealSize
}

// put puts payload, sealed in a sealed file, under key.
func (v vault) put(key, payload []byte) error {
	if !v.sealed {
		return v.b.Put(key, payload)
	}
	val := make([]byte, 0, len(payload)+sealSize)
	val = append(val, payload...)
	val = binary.LittleEndian.AppendUint32(val, sealSum(v.name, key, payload))
	return v.b.Put(key, val)
}

// get returns the payload under key (nil if there is none), failing with
// a damage if it does not match its seal. The payload is valid for the
// transaction only.
func (v vault) get(key []byte) ([]byte, error) {
	raw := v.b.Get(key)
	if raw == nil || !v.sealed {
		return raw, nil
	}
	return v.open(key, raw)
}

// value is get for readers after the open that checked every seal: a
// value that does not match its seal reads as absent.
func (v vault) value(key []byte) []byte {
	p, err := v.get(key)
	if err != nil {
		return nil
	}
	return p
}

// open checks the seal of raw, the value under key, and returns its
// payload.
func (v vault) open(key, raw []byte) ([]byte, error) {
	if len(raw) < sealSize {
		return nil, v.damage(key, "a value of %d bytes has no seal", len(raw))
	}
	p := raw[:len(raw)-sealSize]
	if binary.LittleEndian.Uint32(raw[len(p):]) != sealSum(v.name, key, p) {
		return nil, v.damage(key, "the value does not match its checksum")
	}
	return p, nil
}

// forEach hands fn the key and payload of every value of the bucket,
// checking each seal; a nested bucket is a damage.
func (v vault) forEach(fn func(k, p []byte) error) error {
	return v.b.ForEach(func(k, raw []byte) error {
		if raw == nil {
			return &damageAt{where: v.where(k), kind: DamageRecord, detail: "a nested bucket where values are expected"}
		}
		p := raw
		if v.sealed {
			var err error
			if p, err = v.open(k, raw); err != nil {
				return err
			}
		}
		return fn(k, p)
	})
}

// where names the value under key for errors.
func (v vault) where(key []byte) string {
	if len(key) == 8 && string(v.name) != string(bucketMeta) {
		return fmt.Sprintf("%s/%s", v.name, FormatID(binary.BigEndian.Uint64(key)))
	}
	return fmt.Sprintf("%s/%q", v.name, key)
}

func (v vault) damage(key []byte, format string, args ...any) error {
	return &damageAt{where: v.where(key), kind: DamageChecksum, detail: fmt.Sprintf(format, args...)}
}

// damageAt is a damage of raft.db found inside a transaction, which does
// not know the file's path; raftDB.named turns it into a damage of the
// file.
type damageAt struct {
	where, kind, detail string
}

func (d *damageAt) Error() string { return d.where + ": " + d.detail }

// sealAll seals every value of the meta, members and removed buckets of
// an unsealed file, in tx, and records format 3 sealed. The entries
// bucket, empty from format 2 on, is not sealed.
func sealAll(tx *bolt.Tx) error {
	for _, name := range [][]byte{bucketMeta, bucketMembers, bucketRemoved} {
		b, err := tx.CreateBucketIfNotExists(name)
		if err != nil {
			return err
		}
		type kv struct{ k, v []byte }
		var vals []kv
		err = b.ForEach(func(k, v []byte) error {
			if v == nil {
				return &damageAt{where: fmt.Sprintf("%s/%q", name, k), kind: DamageRecord, detail: "a nested bucket where values are expected"}
			}
			vals = append(vals, kv{append([]byte(nil), k...), append([]byte(nil), v...)})
			return nil
		})
		if err != nil {
			return err
		}
		sv := vault{b: b, name: name, sealed: true}
		for _, e := range vals {
			if string(name) == string(bucketMeta) && string(e.k) == string(keyFormat) {
				continue
			}
			if err := sv.put(e.k, e.v); err != nil {
				return err
			}
		}
	}
	meta := vault{b: tx.Bucket(bucketMeta), name: bucketMeta, sealed: true}
	return meta.put(keyFormat, u64(storageFormat))
}
