package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"testing"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/snapshot"
)

// recvBackup reads a backup stream to its end: the first message, the
// bytes and how many chunks carried them. A chunk after the first that
// repeats the header, or holds more than backupChunk bytes, fails t.
func recvBackup[M interface {
	GetEpoch() uint64
	GetSize() uint64
	GetData() []byte
}](t *testing.T, recv func() (M, error)) (first M, data []byte, chunks int) {
	t.Helper()
	for {
		m, err := recv()
		if errors.Is(err, io.EOF) {
			return first, data, chunks
		}
		if err != nil {
			t.Fatal(err)
		}
		if chunks == 0 {
			first = m
		} else if m.GetEpoch() != 0 || m.GetSize() != 0 {
			t.Errorf("chunk %d repeats the header: %v", chunks, m)
		}
		if len(m.GetData()) > backupChunk {
			t.Errorf("chunk %d holds %d bytes, more than %d", chunks, len(m.GetData()), backupChunk)
		}
		data = append(data, m.GetData()...)
		chunks++
	}
}

// TestBackupStreamsTheWholeFile: the backup arrives in chunks of at most
// backupChunk bytes, the first one announcing the epoch, index and size,
// and the chunks together are a backup that checks out; SaveSnapshot,
// Backup's deprecated name, sends the same bytes.
func TestBackupStreamsTheWholeFile(t *testing.T) {
	defer func(n int) { backupChunk = n }(backupChunk)
	backupChunk = 64
	_, c := startServer(t, 0)
	ctx := context.Background()
	if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.a (id int PRIMARY KEY); CREATE TABLE ks.b (id int PRIMARY KEY, v text)"}); err != nil {
		t.Fatal(err)
	}
	stream, err := c.Backup(ctx, &pb.BackupRequest{})
	if err != nil {
		t.Fatal(err)
	}
	first, data, chunks := recvBackup(t, stream.Recv)
	if first == nil || first.Size != uint64(len(data)) || chunks < 2 {
		t.Fatalf("first message %v, %d bytes in %d chunks", first, len(data), chunks)
	}
	got, err := snapshot.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Epoch != first.Epoch || got.Index != first.Index || got.Epoch == 0 || got.Schema.TableCount() != 2 {
		t.Errorf("backup holds epoch %d index %d with %d tables; announced epoch %d index %d", got.Epoch, got.Index, got.Schema.TableCount(), first.Epoch, first.Index)
	}

	old, err := c.SaveSnapshot(ctx, &pb.SaveSnapshotRequest{})
	if err != nil {
		t.Fatal(err)
	}
	oldFirst, oldData, _ := recvBackup(t, old.Recv)
	if oldFirst == nil || oldFirst.Epoch != first.Epoch || oldFirst.Index != first.Index || !bytes.Equal(oldData, data) {
		t.Errorf("SaveSnapshot sent %v and %d bytes; Backup %v and %d bytes", oldFirst, len(oldData), first, len(data))
	}
}

// TestHTTPBackupDownload: GET /v1/backup (and its deprecated older path,
// /v1/snapshot) is the raw file, with its length and its epoch and index in
// headers; other methods are refused.
func TestHTTPBackupDownload(t *testing.T) {
	srv, c := startServer(t, 0)
	if _, err := c.Execute(context.Background(), &pb.ExecuteRequest{Statements: "CREATE TABLE ks.a (id int PRIMARY KEY)"}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/v1/backup", "/v1/snapshot"} {
		resp, err := http.Get("http://" + srv.HTTPAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/octet-stream" || resp.ContentLength != int64(len(body)) {
			t.Fatalf("GET %s: %d %v, %d bytes of %d, %v", path, resp.StatusCode, resp.Header, len(body), resp.ContentLength, err)
		}
		got, err := snapshot.Decode(body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Header.Get("Metalog-Epoch") != strconv.FormatUint(got.Epoch, 10) || resp.Header.Get("Metalog-Index") != strconv.FormatUint(got.Index, 10) || got.Schema.TableCount() != 1 {
			t.Errorf("GET %s: headers %v for a backup at epoch %d index %d with %d tables", path, resp.Header, got.Epoch, got.Index, got.Schema.TableCount())
		}
		if resp, err := http.Post("http://"+srv.HTTPAddr()+path, "application/json", nil); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST %s: %v %v", path, resp, err)
		} else {
			resp.Body.Close()
		}
	}
}
