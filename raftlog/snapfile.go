package raftlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Snapshot files live next to raft.db:
//
//	<dir>/snap/<term>-<index>.snap   term and index as 16 hex digits each,
//	                                 so names sort like (term, index)
//
// A file holds a header and the snapshot's data (raftpb.Snapshot.Data, which
// is raftlog's envelope, see envelope.go):
//
//	magic  (8 bytes, snapFileMagic)
//	length (8 bytes big-endian) of the data
//	crc32  (4 bytes big-endian, Castagnoli) of the data
//	data
//
// The snapshot's metadata (index, term, ConfState) is in raft.db under
// meta/snapshot; the file it names is written (temp file, fsync, rename,
// directory fsync) before the metadata, so the metadata never names a file
// that is not complete. The newest snapFilesKept files are kept.
const (
	snapDirName   = "snap"
	snapSuffix    = ".snap"
	snapFileMagic = "RLSNAP01"
	snapHeaderLen = len(snapFileMagic) + 8 + 4
	// snapFilesKept is how many snapshot files are kept: the current one
	// and the one before it (to look at when the current one is in doubt).
	snapFilesKept = 2
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func snapFileName(term, index uint64) string {
	return fmt.Sprintf("%016x-%016x%s", term, index, snapSuffix)
}

// parseSnapFileName returns the term and index of a snapshot file name.
func parseSnapFileName(name string) (term, index uint64, ok bool) {
	base, found := strings.CutSuffix(name, snapSuffix)
	if !found || len(base) != 33 || base[16] != '-' {
		return 0, 0, false
	}
	if _, err := fmt.Sscanf(base, "%016x-%016x", &term, &index); err != nil {
		return 0, 0, false
	}
	return term, index, true
}

// writeSnapFile durably writes data as the snapshot file of (term, index) in
// dir and returns its path.
func writeSnapFile(dir string, term, index uint64, data []byte) (path string, err error) {
	path = filepath.Join(dir, snapFileName(term, index))
	f, err := os.CreateTemp(dir, snapFileName(term, index)+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("raftlog: create snapshot file in %s: %w", dir, err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	hdr := make([]byte, 0, snapHeaderLen)
	hdr = append(hdr, snapFileMagic...)
	hdr = binary.BigEndian.AppendUint64(hdr, uint64(len(data)))
	hdr = binary.BigEndian.AppendUint32(hdr, crc32.Checksum(data, crcTable))
	if _, err = f.Write(hdr); err != nil {
		return "", fmt.Errorf("raftlog: write snapshot file %s: %w", path, err)
	}
	if _, err = f.Write(data); err != nil {
		return "", fmt.Errorf("raftlog: write snapshot file %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return "", fmt.Errorf("raftlog: sync snapshot file %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return "", fmt.Errorf("raftlog: close snapshot file %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return "", fmt.Errorf("raftlog: rename snapshot file to %s: %w", path, err)
	}
	if err = syncDir(dir); err != nil {
		return "", fmt.Errorf("raftlog: sync snapshot directory %s: %w", dir, err)
	}
	return path, nil
}

// readSnapFile reads and checks the snapshot file at path and returns its
// data (one allocation of the file's size).
func readSnapFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < snapHeaderLen || string(b[:len(snapFileMagic)]) != snapFileMagic {
		return nil, fmt.Errorf("not a raftlog snapshot file (%d bytes, bad header)", len(b))
	}
	size := binary.BigEndian.Uint64(b[len(snapFileMagic):])
	sum := binary.BigEndian.Uint32(b[len(snapFileMagic)+8:])
	data := b[snapHeaderLen:]
	if size != uint64(len(data)) {
		return nil, fmt.Errorf("truncated or padded: header says %d data bytes, file has %d", size, len(data))
	}
	if got := crc32.Checksum(data, crcTable); got != sum {
		return nil, fmt.Errorf("checksum mismatch: header %08x, data %08x", sum, got)
	}
	return data, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// purgeSnapFiles removes snapshot files other than the current one (at
// index current, 0 for none) and the newest snapFilesKept-1 older ones;
// files after current were never referenced by raft.db (a crash between
// file and metadata) and go too. With removeTemp, leftover temporary files
// are removed as well (only when nothing can be writing them: at open).
func purgeSnapFiles(dir string, current uint64, removeTemp bool) error {
	des, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var older []uint64
	files := make(map[uint64][]string)
	var errs []error
	for _, de := range des {
		name := de.Name()
		if strings.HasSuffix(name, ".tmp") {
			if removeTemp {
				errs = append(errs, os.Remove(filepath.Join(dir, name)))
			}
			continue
		}
		_, index, ok := parseSnapFileName(name)
		if !ok {
			continue
		}
		switch {
		case index > current:
			errs = append(errs, os.Remove(filepath.Join(dir, name)))
		case index < current:
			if len(files[index]) == 0 {
				older = append(older, index)
			}
			files[index] = append(files[index], name)
		}
	}
	slices.Sort(older)
	keepOlder := snapFilesKept - 1
	if current == 0 {
		keepOlder = 0
	}
	for _, index := range older[:max(0, len(older)-keepOlder)] {
		for _, name := range files[index] {
			errs = append(errs, os.Remove(filepath.Join(dir, name)))
		}
	}
	return errors.Join(errs...)
}
