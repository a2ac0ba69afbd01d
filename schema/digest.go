package schema

import (
	"crypto/sha256"
	"encoding/binary"
	"math/bits"
)

// digest is what Apply maintains incrementally for a set of objects: the
// sum of their hashes and the sum of their encoded sizes. The hash sum is a
// 256-bit unsigned integer, big-endian, modulo 2^256. A sum (unlike a hash
// chain) can be updated for one changed object without looking at the
// others, and is independent of the order objects were added in. The hash
// of one object is a digest too (its sum is the hash, its size the length
// of its encoding), so adding or removing an object is one add or sub.
type digest struct {
	sum   [32]byte
	size  int64 // total length of the canonical encodings
	count int64 // number of objects
}

// add sets d to d + h: the hash sums modulo 2^256, the sizes exactly.
func (d *digest) add(h digest) {
	var carry uint64
	for i := 24; i >= 0; i -= 8 {
		var r uint64
		r, carry = bits.Add64(binary.BigEndian.Uint64(d.sum[i:]), binary.BigEndian.Uint64(h.sum[i:]), carry)
		binary.BigEndian.PutUint64(d.sum[i:], r)
	}
	d.size += h.size
	d.count += h.count
}

// sub sets d to d - h.
func (d *digest) sub(h digest) {
	var borrow uint64
	for i := 24; i >= 0; i -= 8 {
		var r uint64
		r, borrow = bits.Sub64(binary.BigEndian.Uint64(d.sum[i:]), binary.BigEndian.Uint64(h.sum[i:]), borrow)
		binary.BigEndian.PutUint64(d.sum[i:], r)
	}
	d.size -= h.size
	d.count -= h.count
}

// The hash of an object is the SHA-256 of its canonical encoding, which
// starts with the record kind and holds the object's keyspace and name, so
// objects of different kinds or names hash independently. The encoding is
// built in a stack buffer once, for both the hash and the size.

func objectDigest(b []byte) digest {
	return digest{sum: sha256.Sum256(b), size: int64(len(b)), count: 1}
}

func keyspaceHash(k *Keyspace) digest {
	var buf [128]byte
	return objectDigest(AppendKeyspace(buf[:0], k))
}

func tableHash(t *Table) digest {
	var buf [256]byte
	return objectDigest(AppendTable(buf[:0], t))
}

func userTypeHash(ut *UserType) digest {
	var buf [256]byte
	return objectDigest(AppendUserType(buf[:0], ut))
}

func indexHash(ix *Index) digest {
	var buf [128]byte
	return objectDigest(AppendIndex(buf[:0], ix))
}

func functionHash(f *Function) digest {
	var buf [256]byte
	return objectDigest(AppendFunction(buf[:0], f))
}

// keyspaceDigest computes the digest of k and everything in it from
// scratch. It walks the keyspace.
func keyspaceDigest(k *Keyspace) digest {
	var d digest
	d.add(keyspaceHash(k))
	for _, t := range k.Tables() {
		d.add(tableHash(t))
	}
	for _, ut := range k.UserTypes() {
		d.add(userTypeHash(ut))
	}
	for _, ix := range k.Indexes() {
		d.add(indexHash(ix))
	}
	for _, f := range k.Functions() {
		d.add(functionHash(f))
	}
	return d
}

// ComputeDigest computes the digest of s from scratch, walking every
// object. It equals s.Digest() for every schema built by this package; it
// exists for tests and for repair tools that distrust the incremental one.
func ComputeDigest(s Schema) [32]byte {
	var d digest
	for _, k := range s.Keyspaces() {
		d.add(keyspaceDigest(k))
	}
	return d.sum
}

// ComputeEncodedSize computes the encoded size of s from scratch: the sum
// of the lengths of AppendKeyspace, AppendTable, AppendUserType and
// AppendIndex over every object. It walks every object and, unlike Apply,
// does not share code with the digest, so it equals s.EncodedSize() for
// every schema built by this package; it exists for tests and repair tools.
func ComputeEncodedSize(s Schema) int64 {
	var n int64
	var buf []byte
	for _, k := range s.Keyspaces() {
		buf = AppendKeyspace(buf[:0], k)
		n += int64(len(buf))
		for _, t := range k.Tables() {
			buf = AppendTable(buf[:0], t)
			n += int64(len(buf))
		}
		for _, ut := range k.UserTypes() {
			buf = AppendUserType(buf[:0], ut)
			n += int64(len(buf))
		}
		for _, ix := range k.Indexes() {
			buf = AppendIndex(buf[:0], ix)
			n += int64(len(buf))
		}
		for _, f := range k.Functions() {
			buf = AppendFunction(buf[:0], f)
			n += int64(len(buf))
		}
	}
	return n
}
