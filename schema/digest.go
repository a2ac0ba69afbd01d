package schema

import (
	"crypto/sha256"
	"encoding/binary"
	"math/bits"
)

// digest is a 256-bit unsigned integer, big-endian, used as a sum of object
// hashes modulo 2^256. A sum (unlike a hash chain) can be updated for one
// changed object without looking at the others, and is independent of the
// order objects were added in.
type digest [32]byte

// add sets d to d + h mod 2^256.
func (d *digest) add(h [32]byte) {
	var carry uint64
	for i := 24; i >= 0; i -= 8 {
		var r uint64
		r, carry = bits.Add64(binary.BigEndian.Uint64(d[i:]), binary.BigEndian.Uint64(h[i:]), carry)
		binary.BigEndian.PutUint64(d[i:], r)
	}
}

// sub sets d to d - h mod 2^256.
func (d *digest) sub(h [32]byte) {
	var borrow uint64
	for i := 24; i >= 0; i -= 8 {
		var r uint64
		r, borrow = bits.Sub64(binary.BigEndian.Uint64(d[i:]), binary.BigEndian.Uint64(h[i:]), borrow)
		binary.BigEndian.PutUint64(d[i:], r)
	}
}

// The hash of an object is the SHA-256 of its canonical encoding, which
// starts with the record kind and holds the object's keyspace and name, so
// objects of different kinds or names hash independently.

func keyspaceHash(k *Keyspace) [32]byte {
	var buf [128]byte
	return sha256.Sum256(AppendKeyspace(buf[:0], k))
}

func tableHash(t *Table) [32]byte {
	var buf [256]byte
	return sha256.Sum256(AppendTable(buf[:0], t))
}

func userTypeHash(ut *UserType) [32]byte {
	var buf [256]byte
	return sha256.Sum256(AppendUserType(buf[:0], ut))
}

func indexHash(ix *Index) [32]byte {
	var buf [128]byte
	return sha256.Sum256(AppendIndex(buf[:0], ix))
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
	return d
}
