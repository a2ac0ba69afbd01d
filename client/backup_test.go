package client

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/internal/testkit"
)

// backupFake is a member that predates Backup: its SaveSnapshot announces epoch 7, index 9 and
// size, then sends data in chunks of 3 bytes.
type backupFake struct {
	pb.UnimplementedMetadataServiceServer
	data []byte
	size uint64
}

func (f *backupFake) SaveSnapshot(_ *pb.SaveSnapshotRequest, stream grpc.ServerStreamingServer[pb.SaveSnapshotResponse]) error {
	first := &pb.SaveSnapshotResponse{Epoch: 7, Index: 9, Size: f.size}
	for i := 0; i == 0 || i < len(f.data); i += 3 {
		m := &pb.SaveSnapshotResponse{Data: f.data[i:min(i+3, len(f.data))]}
		if first != nil {
			first.Data, m, first = m.Data, first, nil
		}
		if err := stream.Send(m); err != nil {
			return err
		}
	}
	return nil
}

// currentBackupFake is a member that knows Backup: it sends what
// backupFake sends, under the method's current name, and refuses
// SaveSnapshot so that a client falling back to it is caught.
type currentBackupFake struct{ backupFake }

func (f *currentBackupFake) Backup(_ *pb.BackupRequest, stream grpc.ServerStreamingServer[pb.BackupResponse]) error {
	return f.backupFake.SaveSnapshot(nil, backupAsSnapshot{stream})
}

func (f *currentBackupFake) SaveSnapshot(*pb.SaveSnapshotRequest, grpc.ServerStreamingServer[pb.SaveSnapshotResponse]) error {
	return status.Error(codes.FailedPrecondition, "this member answers Backup only")
}

// backupAsSnapshot sends SaveSnapshot messages as Backup messages.
type backupAsSnapshot struct {
	grpc.ServerStreamingServer[pb.BackupResponse]
}

func (s backupAsSnapshot) Send(m *pb.SaveSnapshotResponse) error {
	return s.ServerStreamingServer.Send(&pb.BackupResponse{Epoch: m.Epoch, Index: m.Index, Size: m.Size, Data: m.Data})
}

// TestSaveBackupAsksBackupFirst: a member that knows Backup is asked with
// it (this one refuses SaveSnapshot), and one that predates it
// (backupFake: Backup is unimplemented) with SaveSnapshot; both give the
// same backup.
func TestSaveBackupAsksBackupFirst(t *testing.T) {
	noLeaks(t)
	data := []byte("0123456789abcdef")
	for _, srv := range []pb.MetadataServiceServer{
		&currentBackupFake{backupFake{data: data, size: uint64(len(data))}},
		&backupFake{data: data, size: uint64(len(data))},
	} {
		var buf bytes.Buffer
		info, err := SaveBackup(testCtx(t), startFakeServer(t, srv), &buf)
		if err != nil || *info != (BackupInfo{Epoch: 7, Index: 9, Size: uint64(len(data))}) || !bytes.Equal(buf.Bytes(), data) {
			t.Errorf("SaveBackup from %T: %+v, %v, wrote %q; want epoch 7, index 9, the %d bytes sent", srv, info, err, buf.Bytes(), len(data))
		}
	}
}

// startBackupFake serves f on a loopback port until the test ends and
// returns a Client of it.
func startBackupFake(t *testing.T, f *backupFake) *Client {
	t.Helper()
	return startFakeServer(t, f)
}

// startFakeServer serves srv on a loopback port until the test ends and
// returns a Client of it.
func startFakeServer(t *testing.T, srv pb.MetadataServiceServer) *Client {
	t.Helper()
	return newTestClient(t, Config{Endpoints: []string{testkit.Serve(t, srv)}})
}

// failingWriter fails every write.
type failingWriter struct{}

var errWriterFull = errors.New("writer full")

func (failingWriter) Write([]byte) (int, error) { return 0, errWriterFull }

// TestSaveBackupChecksWhatArrived: SaveBackup writes every byte into w and
// returns what the member announced; fewer bytes than announced, or a
// writer that fails, are errors saying so.
func TestSaveBackupChecksWhatArrived(t *testing.T) {
	noLeaks(t)
	data := []byte("0123456789abcdef")
	var buf bytes.Buffer
	info, err := SaveBackup(testCtx(t), startBackupFake(t, &backupFake{data: data, size: uint64(len(data))}), &buf)
	if err != nil || *info != (BackupInfo{Epoch: 7, Index: 9, Size: uint64(len(data))}) || !bytes.Equal(buf.Bytes(), data) {
		t.Errorf("SaveBackup: %+v, %v, wrote %q; want epoch 7, index 9, the %d bytes sent", info, err, buf.Bytes(), len(data))
	}
	_, err = SaveBackup(testCtx(t), startBackupFake(t, &backupFake{data: data, size: 100}), &buf)
	if !errors.Is(err, ErrBadBackup) || !strings.Contains(err.Error(), "16 bytes arrived, the member announced 100") {
		t.Errorf("SaveBackup of a short stream: %v, want ErrBadBackup naming both sizes", err)
	}
	_, err = SaveBackup(testCtx(t), startBackupFake(t, &backupFake{data: data, size: uint64(len(data))}), failingWriter{})
	if !errors.Is(err, errWriterFull) {
		t.Errorf("SaveBackup into a failing writer: %v, want its error", err)
	}
}

// TestSaveBackupFileRenamesOnlyWhatChecksOut: SaveBackupFile replaces the
// target with a backup that checks out, and leaves it as it was, with no
// temporary file behind, when the bytes are short, when verify refuses
// them (its error wrapped), or when they hold another epoch or index than
// the member announced.
func TestSaveBackupFileRenamesOnlyWhatChecksOut(t *testing.T) {
	noLeaks(t)
	data := []byte("0123456789abcdef")
	errDamaged := errors.New("damaged")
	for _, tc := range []struct {
		name   string
		size   uint64
		verify func([]byte) (uint64, uint64, error)
		want   error // nil: saved
	}{
		{"no verify", 16, nil, nil},
		{"verified", 16, func(b []byte) (uint64, uint64, error) { return 7, 9, nil }, nil},
		{"short", 17, nil, ErrBadBackup},
		{"refused", 16, func(b []byte) (uint64, uint64, error) { return 0, 0, errDamaged }, errDamaged},
		{"another epoch", 16, func(b []byte) (uint64, uint64, error) { return 8, 9, nil }, ErrBadBackup},
		{"another index", 16, func(b []byte) (uint64, uint64, error) { return 7, 10, nil }, ErrBadBackup},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "backup.snap")
		if err := os.WriteFile(path, []byte("the previous backup"), 0o600); err != nil {
			t.Fatal(err)
		}
		var verified []byte
		verify := tc.verify
		if verify != nil {
			verify = func(b []byte) (uint64, uint64, error) { verified = b; return tc.verify(b) }
		}
		info, err := SaveBackupFile(testCtx(t), startBackupFake(t, &backupFake{data: data, size: tc.size}), path, verify)
		got, _ := os.ReadFile(path)
		entries, _ := os.ReadDir(dir)
		switch {
		case tc.want == nil && (err != nil || info.Epoch != 7 || !bytes.Equal(got, data) || tc.verify != nil && !bytes.Equal(verified, data)):
			t.Errorf("%s: %+v, %v, file %q; want the backup saved (and verified)", tc.name, info, err, got)
		case tc.want != nil && (!errors.Is(err, tc.want) || !errors.Is(err, ErrBadBackup) || string(got) != "the previous backup"):
			t.Errorf("%s: %v, file %q; want %v (ErrBadBackup) and the file left as it was", tc.name, err, got, tc.want)
		}
		if len(entries) != 1 {
			t.Errorf("%s: the directory holds %d files, want only the backup", tc.name, len(entries))
		}
	}
}
