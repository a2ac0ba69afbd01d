package main

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/member"
)

// garbageMember answers SaveSnapshot with bytes of the size it announces
// that are no backup.
type garbageMember struct {
	pb.UnimplementedMetadataServiceServer
}

func (garbageMember) SaveSnapshot(_ *pb.SaveSnapshotRequest, stream grpc.ServerStreamingServer[pb.SaveSnapshotResponse]) error {
	return stream.Send(&pb.SaveSnapshotResponse{Epoch: 3, Index: 4, Size: 5, Data: []byte("trash")})
}

// TestSnapshotSaveRefusesWhatDoesNotCheckOut: snapshot save goes through
// client.SaveBackupFile checked by member.VerifyBackup: bytes that are no
// backup are refused with both libraries' reasons, and the target and
// its directory are left as they were.
func TestSnapshotSaveRefusesWhatDoesNotCheckOut(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	pb.RegisterMetadataServiceServer(s, garbageMember{})
	done := make(chan struct{})
	go func() { defer close(done); s.Serve(lis) }()
	t.Cleanup(func() { s.Stop(); <-done })

	dir := t.TempDir()
	path := filepath.Join(dir, "backup.snap")
	_, err = runErr(t, "snapshot", "save", path, "--endpoints", lis.Addr().String())
	if !errors.Is(err, client.ErrBadBackup) || !errors.Is(err, member.ErrBadBackup) || !strings.Contains(err.Error(), "not a metalog snapshot") {
		t.Errorf("snapshot save of bytes that are no backup: %v, want client.ErrBadBackup wrapping member.ErrBadBackup", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the directory holds %d files after a refused save, want none", len(entries))
	}
}
