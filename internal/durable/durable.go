// Package durable holds the one durability helper shared by the raft log
// storage and the CLI: making a directory's entries (a rename, a new file)
// durable.
package durable

import "os"

// SyncDir fsyncs directory dir, so that a file created or renamed in it
// survives a crash.
func SyncDir(dir string) error {
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
