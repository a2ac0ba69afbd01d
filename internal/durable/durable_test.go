package durable

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSyncDir(t *testing.T) {
	if err := SyncDir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(filepath.Join(t.TempDir(), "missing")); !os.IsNotExist(err) {
		t.Fatalf("SyncDir of a missing directory: %v, want not exist", err)
	}
}
