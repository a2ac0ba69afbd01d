package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/internal/durable"
)

// ErrBadBackup is matched (errors.Is) by the error of SaveBackup and
// SaveBackupFile when what arrived is not the backup the member announced:
// fewer or more bytes, another epoch or index, or bytes that the verify
// function refused (its error is wrapped too). Nothing was renamed into
// place; save the backup again.
var ErrBadBackup = errors.New("client: backup: what arrived does not check out")

// BackupInfo is what a member announced of the backup it sent, in the
// first message of the backup stream.
type BackupInfo struct {
	// Epoch is the epoch the backup holds: the cluster's schema as of a
	// linearizable point.
	Epoch uint64
	// Index is the raft log index of that epoch's entry.
	Index uint64
	// Size is the backup's size in bytes.
	Size uint64
}

// SaveBackup streams a backup of the cluster (Backup: the schema, the
// guardrail settings, the remembered request ids and the history kept, as
// of a linearizable point, in the members' checksummed backup format)
// into w, and returns what the member announced once every byte it
// announced was written. The first endpoint that answers sends it (it
// needs the operator role); a member that predates Backup is asked under
// the method's older name, SaveSnapshot. Without a deadline on ctx the
// whole backup is bounded by Config.Timeout. A failure after the first
// bytes is not retried, since w cannot be rewound: save the backup again.
// w gets the bytes as they come; to keep a file that is either the whole
// backup or untouched, use SaveBackupFile.
func SaveBackup(ctx context.Context, c *Client, w io.Writer) (*BackupInfo, error) {
	recv, err := openBackupChunks(ctx, c)
	if err != nil {
		return nil, err
	}
	return writeBackup(recv, w)
}

// openBackupChunks opens a backup stream with Backup, or with SaveSnapshot
// when the member answers that it does not know Backup, and returns its
// Recv as BackupResponse messages.
func openBackupChunks(ctx context.Context, c *Client) (func() (*pb.BackupResponse, error), error) {
	stream, err := c.Backup(ctx, &pb.BackupRequest{})
	if err == nil {
		return stream.Recv, nil
	}
	if status.Code(err) != codes.Unimplemented {
		return nil, err
	}
	old, err := c.SaveSnapshot(ctx, &pb.SaveSnapshotRequest{})
	if err != nil {
		return nil, err
	}
	return func() (*pb.BackupResponse, error) {
		m, err := old.Recv()
		if err != nil {
			return nil, err
		}
		return &pb.BackupResponse{Epoch: m.Epoch, Index: m.Index, Size: m.Size, Data: m.Data}, nil
	}, nil
}

// writeBackup writes the chunks recv gives into w, and checks that as many
// bytes arrived as the first chunk announced.
func writeBackup(recv func() (*pb.BackupResponse, error), w io.Writer) (*BackupInfo, error) {
	var info *BackupInfo
	var n uint64
	for {
		m, err := recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if info == nil {
			info = &BackupInfo{Epoch: m.Epoch, Index: m.Index, Size: m.Size}
		}
		if _, err := w.Write(m.Data); err != nil {
			return nil, fmt.Errorf("client: backup at epoch %d: writing it: %w", info.Epoch, err)
		}
		n += uint64(len(m.Data))
	}
	if info == nil {
		return nil, fmt.Errorf("%w: the member ended the stream without sending a backup; save it again", ErrBadBackup)
	}
	if n != info.Size {
		return nil, fmt.Errorf("%w: %d bytes arrived, the member announced %d (epoch %d); save it again", ErrBadBackup, n, info.Size, info.Epoch)
	}
	return info, nil
}

// SaveBackupFile saves a backup of the cluster (see SaveBackup) into the
// file at path, the safe way: it writes a temporary file next to path,
// fsyncs it, reads it back and checks it, renames it to path and fsyncs
// the directory, so path is either the whole backup or left as it was.
// The check is that the file is the size the member announced and, when
// verify is not nil, that verify accepts its bytes and finds in them the
// epoch and raft log index the member announced; member.CheckBackup
// checks the whole format (checksum, objects, schema digest, history), as
// `metalog backup save` does. The file is readable by its owner only.
func SaveBackupFile(ctx context.Context, c *Client, path string, verify func(data []byte) (epoch, index uint64, err error)) (*BackupInfo, error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("client: backup to %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	defer tmp.Close()
	info, err := SaveBackup(ctx, c, tmp)
	if err != nil {
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		return nil, fmt.Errorf("client: backup to %s: fsync %s: %w", path, tmp.Name(), err)
	}
	data, err := os.ReadFile(tmp.Name())
	if err != nil {
		return nil, fmt.Errorf("client: backup to %s: reading it back: %w", path, err)
	}
	if err := checkBackup(data, info, verify); err != nil {
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("client: backup to %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, fmt.Errorf("client: backup to %s: %w", path, err)
	}
	if err := durable.SyncDir(dir); err != nil {
		return nil, fmt.Errorf("client: backup to %s: fsync %s: %w", path, dir, err)
	}
	return info, nil
}

// checkBackup checks the bytes of a backup read back against what the
// member announced, and with verify, if not nil.
func checkBackup(data []byte, info *BackupInfo, verify func([]byte) (uint64, uint64, error)) error {
	if uint64(len(data)) != info.Size {
		return fmt.Errorf("%w: the file read back holds %d bytes, the member announced %d (epoch %d); save it again", ErrBadBackup, len(data), info.Size, info.Epoch)
	}
	if verify == nil {
		return nil
	}
	epoch, index, err := verify(data)
	if err != nil {
		return fmt.Errorf("%w: %w; save it again", ErrBadBackup, err)
	}
	if epoch != info.Epoch || index != info.Index {
		return fmt.Errorf("%w: it holds epoch %d index %d, the member announced epoch %d index %d; save it again", ErrBadBackup, epoch, index, info.Epoch, info.Index)
	}
	return nil
}
