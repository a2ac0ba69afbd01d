package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/internal/testkit"
	"github.com/metalog/metalog/member"
)

// TestBackupSaveRefusesWhatDoesNotCheckOut: backup save goes through
// client.SaveBackupFile checked by member.VerifyBackup: bytes that are no
// backup are refused with both libraries' reasons, and the target and its
// directory are left as they were. snapshot save, its deprecated older
// name, does the same and says it is deprecated.
func TestBackupSaveRefusesWhatDoesNotCheckOut(t *testing.T) {
	// A member that predates Backup, whose SaveSnapshot sends bytes of
	// the size it announces that are no backup.
	addr := testkit.Serve(t, &testkit.Fake{OnSaveSnapshot: func(_ *pb.SaveSnapshotRequest, stream grpc.ServerStreamingServer[pb.SaveSnapshotResponse]) error {
		return stream.Send(&pb.SaveSnapshotResponse{Epoch: 3, Index: 4, Size: 5, Data: []byte("trash")})
	}})

	for _, name := range []string{"backup", "snapshot"} {
		dir := t.TempDir()
		path := filepath.Join(dir, "backup.snap")
		out, err := runErr(t, name, "save", path, "--endpoints", addr)
		if !errors.Is(err, client.ErrBadBackup) || !errors.Is(err, member.ErrBadBackup) || !strings.Contains(err.Error(), "not a metalog snapshot") {
			t.Errorf("%s save of bytes that are no backup: %v, want client.ErrBadBackup wrapping member.ErrBadBackup", name, err)
		}
		if deprecated := strings.Contains(out, `use "metalog backup save"`); deprecated != (name == "snapshot") {
			t.Errorf("%s save printed %q: says it is deprecated %v, want %v", name, out, deprecated, name == "snapshot")
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("the directory holds %d files after a refused %s save, want none", len(entries), name)
		}
	}
}
