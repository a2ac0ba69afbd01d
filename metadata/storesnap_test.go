package metadata

import (
	"testing"

	"github.com/metalog/metalog/snapshot"
)

// capturedContents is what a snapshot Capture took holds, as the contents
// of a record stream: it is restored into a state machine of its own.
func capturedContents(t testing.TB, data []byte) *snapshot.Contents {
	t.Helper()
	s, err := snapshot.DecodeStore(data)
	if err != nil {
		t.Fatal(err)
	}
	sm, err := Open(Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer sm.Close()
	if err := sm.Restore(s.Index, data); err != nil {
		t.Fatal(err)
	}
	c := snapshotContents(sm.Current(), s.Index)
	return &c
}

// recordStream is the snapshot of m at index in the format members wrote
// before store snapshots, which Restore still takes.
func recordStream(m *ClusterMetadata, index uint64) []byte {
	c := snapshotContents(m, index)
	return snapshot.Encode(nil, &c)
}
