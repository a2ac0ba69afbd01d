package member

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// damage is one change to one file of a data dir.
type damage struct {
	// File is the damaged file, relative to the data dir.
	File string
	// What says where the damage is, for the report.
	What string
	// Op is "xor" (Mask into the byte at Off), "zero" (N bytes from
	// Off), "truncate" (the file cut to Off bytes) or "remove".
	Op   string
	Off  int64
	N    int64
	Mask byte
}

func (d damage) String() string {
	switch d.Op {
	case "xor":
		return fmt.Sprintf("%s: %s: xor %#02x at %d", d.File, d.What, d.Mask, d.Off)
	case "zero":
		return fmt.Sprintf("%s: %s: zero %d bytes at %d", d.File, d.What, d.N, d.Off)
	case "truncate":
		return fmt.Sprintf("%s: %s: cut to %d bytes", d.File, d.What, d.Off)
	}
	return fmt.Sprintf("%s: %s: %s", d.File, d.What, d.Op)
}

// apply makes the damage to the data dir dir.
func (d damage) apply(dir string) error {
	path := filepath.Join(dir, d.File)
	switch d.Op {
	case "none":
		return nil
	case "remove":
		return os.Remove(path)
	case "truncate":
		return os.Truncate(path, d.Off)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, max(d.N, 1))
	if d.Op == "xor" {
		if _, err := f.ReadAt(buf, d.Off); err != nil {
			return fmt.Errorf("%v: %w", d, err)
		}
		buf[0] ^= d.Mask
	}
	_, err = f.WriteAt(buf, d.Off)
	return err
}

// copyDir copies the data dir src to dst, leaving holes where src has
// blocks of zeros (schema.db and the WAL segments are mostly space
// allocated ahead).
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(path string, de os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if de.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		return copySparse(path, target)
	})
}

func copySparse(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	const block = 4096
	zeros := make([]byte, block)
	for off := 0; off < len(b); off += block {
		chunk := b[off:min(off+block, len(b))]
		if bytes.Equal(chunk, zeros[:len(chunk)]) {
			continue
		}
		if _, err := f.WriteAt(chunk, int64(off)); err != nil {
			return err
		}
	}
	return f.Truncate(int64(len(b)))
}

// boltRecord is a key and its value in a bbolt file, as offsets.
type boltRecord struct {
	path         string // bucket path and key, for the report
	keyOff, vOff int64
	kLen, vLen   int
	bucket       bool
}

// boltLayout is what the sweep damages in a sound bbolt file: its pages
// in use (the meta pages, the freelist, branches, leaves and free pages),
// and every record.
type boltLayout struct {
	pageSize int64
	hwm      int64 // pages in use
	// pages are the offsets of the page headers in use, inline pages of
	// buckets among them.
	pages   []int64
	records []boltRecord
}

// readBoltLayout walks the sound bbolt file at path from its newest meta
// page. It trusts the file: it is the pristine copy.
func readBoltLayout(path string) (*boltLayout, error) {
	f, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	meta := func(off int64) (pageSize, root, pgid, txid uint64) {
		m := f[off+16:]
		return uint64(binary.LittleEndian.Uint32(m[8:])), binary.LittleEndian.Uint64(m[16:]), binary.LittleEndian.Uint64(m[40:]), binary.LittleEndian.Uint64(m[48:])
	}
	ps, root, pgid, txid := meta(0)
	if _, r1, g1, t1 := meta(int64(ps)); t1 > txid {
		root, pgid = r1, g1
	}
	l := &boltLayout{pageSize: int64(ps), hwm: int64(pgid)}
	if l.hwm*l.pageSize > int64(len(f)) {
		return nil, fmt.Errorf("%s: %d pages of %d bytes in %d bytes", path, l.hwm, l.pageSize, len(f))
	}
	for id := range l.hwm {
		l.pages = append(l.pages, id*l.pageSize)
	}
	if err := l.walk(f, int64(root)*l.pageSize, "", 0); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// walk collects the records of the page (a branch, a leaf or an inline
// page) whose header is at off in f, under the bucket path.
func (l *boltLayout) walk(f []byte, off int64, path string, depth int) error {
	if depth > 32 || off < 0 || off+16 > int64(len(f)) {
		return fmt.Errorf("page at %d out of bounds", off)
	}
	flags := binary.LittleEndian.Uint16(f[off+8:])
	count := int64(binary.LittleEndian.Uint16(f[off+10:]))
	for i := range count {
		e := off + 16 + i*16
		if flags&0x01 != 0 { // branch: pos, ksize, pgid
			child := int64(binary.LittleEndian.Uint64(f[e+8:]))
			if err := l.walk(f, child*l.pageSize, path, depth+1); err != nil {
				return err
			}
			continue
		}
		eflags := binary.LittleEndian.Uint32(f[e:])
		pos := int64(binary.LittleEndian.Uint32(f[e+4:]))
		ksize := int(binary.LittleEndian.Uint32(f[e+8:]))
		vsize := int(binary.LittleEndian.Uint32(f[e+12:]))
		r := boltRecord{keyOff: e + pos, vOff: e + pos + int64(ksize), kLen: ksize, vLen: vsize, bucket: eflags&1 != 0}
		r.path = path + "/" + keyName(f[r.keyOff:r.keyOff+int64(ksize)])
		l.records = append(l.records, r)
		if !r.bucket {
			continue
		}
		broot := int64(binary.LittleEndian.Uint64(f[r.vOff:]))
		inline := r.vOff + 16
		if broot != 0 {
			inline = broot * l.pageSize
		} else {
			l.pages = append(l.pages, inline)
		}
		if err := l.walk(f, inline, r.path, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// boltDamages are the damages of the bbolt file name (in the data dir
// dir): every page header in use (its flags, and for every other page
// its element count, id or overflow by turns), every record (a byte of
// its value; a byte of the key of every fourth and of every meta key),
// every third page zeroed, the file cut short, and n other bytes of its
// pages in use, at offsets drawn from rng.
func boltDamages(t *testing.T, dir, name string, rng *rand.Rand, n int) []damage {
	t.Helper()
	l, err := readBoltLayout(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	var ds []damage
	fields := []struct {
		at   int64
		name string
	}{{8, "flags"}, {10, "element count"}, {0, "page id"}, {12, "overflow"}}
	for i, off := range l.pages {
		what := fmt.Sprintf("page header at %d", off)
		ds = append(ds, damage{File: name, What: what + " flags", Op: "xor", Off: off + 8, Mask: 0x12})
		if f := fields[1+i%3]; i%2 == 0 {
			ds = append(ds, damage{File: name, What: what + " " + f.name, Op: "xor", Off: off + f.at, Mask: 0x01})
		}
		if off%l.pageSize == 0 && i%3 == 0 {
			ds = append(ds, damage{File: name, What: fmt.Sprintf("page %d", off/l.pageSize), Op: "zero", Off: off, N: l.pageSize})
		}
	}
	for i, r := range l.records {
		at := r.vOff + int64(r.vLen/2)
		if r.bucket {
			at = r.vOff // the bucket's root page id
		}
		if r.vLen > 0 {
			ds = append(ds, damage{File: name, What: "value of " + r.path, Op: "xor", Off: at, Mask: 0x04})
		}
		// Keys looked up by name (meta) may read as absent when damaged.
		if (i%4 == 0 || strings.HasPrefix(r.path, "/meta/")) && r.kLen > 0 {
			ds = append(ds, damage{File: name, What: "key of " + r.path, Op: "xor", Off: r.keyOff + int64(r.kLen-1), Mask: 0x01})
		}
	}
	end := l.hwm * l.pageSize
	for _, cut := range []int64{0, 100, 2 * l.pageSize, end / 2, end - 1} {
		ds = append(ds, damage{File: name, What: "cut short", Op: "truncate", Off: cut})
	}
	for range n {
		ds = append(ds, damage{File: name, What: "sampled byte", Op: "xor", Off: rng.Int64N(end), Mask: byte(1 << rng.IntN(8))})
	}
	return ds
}

// walRecords are the offsets and lengths of the records of the WAL
// segment b, up to the zeros allocated ahead.
func walRecords(b []byte) (offs, lens []int64) {
	for off := int64(0); off+9 <= int64(len(b)); {
		size := int64(binary.BigEndian.Uint32(b[off+4:]))
		if size == 0 && binary.BigEndian.Uint32(b[off:]) == 0 {
			break
		}
		offs, lens = append(offs, off), append(lens, 9+size)
		off += 9 + size
	}
	return offs, lens
}

// walDamages are the damages of the WAL segment of the data dir dir,
// in its last tail records (all for tail 0): a byte of every record's
// payload, the checksum of every third, every fourth record cut in the
// middle, the segment cut at every fifth record boundary, before the
// last record and after it.
func walDamages(t *testing.T, dir string, tail int) []damage {
	t.Helper()
	name := walSegment(t, dir)
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	offs, lens := walRecords(b)
	first := 0
	if tail > 0 {
		first = max(0, len(offs)-tail)
	}
	var ds []damage
	for i := first; i < len(offs); i++ {
		off, n := offs[i], lens[i]
		what := fmt.Sprintf("record %d of %d (%d bytes at %d)", i, len(offs), n, off)
		ds = append(ds, damage{File: name, What: what + " payload", Op: "xor", Off: off + 9 + (n-9)/2, Mask: 0x08})
		if i%3 == 0 {
			ds = append(ds, damage{File: name, What: what + " checksum", Op: "xor", Off: off + 1, Mask: 0x01})
		}
		if i%4 == 0 || tail > 0 {
			ds = append(ds, damage{File: name, What: what + " cut in the middle", Op: "truncate", Off: off + n/2})
		}
		if i%5 == 0 && off > 0 || tail > 0 {
			ds = append(ds, damage{File: name, What: fmt.Sprintf("cut before record %d of %d", i, len(offs)), Op: "truncate", Off: off})
		}
	}
	end := offs[len(offs)-1] + lens[len(lens)-1]
	return append(ds, damage{File: name, What: "cut after the last record", Op: "truncate", Off: end})
}

// snapDamages are the damages of every snapshot file of the data dir
// dir: each byte of the header of the newest (a sample of the older), n
// sampled bytes of its data, the file cut short and removed.
func snapDamages(t *testing.T, dir string, rng *rand.Rand, n int) []damage {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "snap", "*.snap"))
	slices.Sort(files)
	var ds []damage
	for i, path := range files {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		newest := i == len(files)-1
		name := filepath.Join("snap", filepath.Base(path))
		const header = 20
		for at := int64(0); at < header; at++ {
			if newest && at%2 == 0 || at%7 == 0 {
				ds = append(ds, damage{File: name, What: "header", Op: "xor", Off: at, Mask: 0x10})
			}
		}
		k := n
		if !newest {
			k = n / 4
		}
		for range k {
			ds = append(ds, damage{File: name, What: "data", Op: "xor", Off: header + rng.Int64N(fi.Size()-header), Mask: byte(1 << rng.IntN(8))})
		}
		ds = append(ds,
			damage{File: name, What: "cut in the header", Op: "truncate", Off: 9},
			damage{File: name, What: "cut in the data", Op: "truncate", Off: header + (fi.Size()-header)/2},
			damage{File: name, What: "zeroed", Op: "zero", Off: 0, N: fi.Size()},
			damage{File: name, What: "removed", Op: "remove"})
	}
	return ds
}

// keyName is a key for the report: as is when printable, else in hex.
func keyName(k []byte) string {
	for _, c := range k {
		if c < 0x20 || c > 0x7e {
			return fmt.Sprintf("%x", k)
		}
	}
	return string(k)
}
