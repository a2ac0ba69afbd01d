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

// TestSaveSnapshotStreamsTheWholeFile: the backup arrives in chunks of at
// most snapshotChunk bytes, the first one announcing the epoch, index and
// size, and the chunks together are a snapshot file that checks out.
func TestSaveSnapshotStreamsTheWholeFile(t *testing.T) {
	defer func(n int) { snapshotChunk = n }(snapshotChunk)
	snapshotChunk = 64
	_, c := startServer(t, 0)
	ctx := context.Background()
	if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.a (id int PRIMARY KEY); CREATE TABLE ks.b (id int PRIMARY KEY, v text)"}); err != nil {
		t.Fatal(err)
	}
	stream, err := c.SaveSnapshot(ctx, &pb.SaveSnapshotRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var data bytes.Buffer
	var first *pb.SaveSnapshotResponse
	chunks := 0
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = m
		} else if m.Epoch != 0 || m.Size != 0 {
			t.Errorf("chunk %d repeats the header: %v", chunks, m)
		}
		if len(m.Data) > snapshotChunk {
			t.Errorf("chunk %d holds %d bytes, more than %d", chunks, len(m.Data), snapshotChunk)
		}
		data.Write(m.Data)
		chunks++
	}
	if first == nil || first.Size != uint64(data.Len()) || chunks < 2 {
		t.Fatalf("first message %v, %d bytes in %d chunks", first, data.Len(), chunks)
	}
	got, err := snapshot.Decode(data.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got.Epoch != first.Epoch || got.Index != first.Index || got.Epoch == 0 || got.Schema.TableCount() != 2 {
		t.Errorf("backup holds epoch %d index %d with %d tables; announced epoch %d index %d", got.Epoch, got.Index, got.Schema.TableCount(), first.Epoch, first.Index)
	}
}

// TestHTTPSnapshotDownload: GET /v1/snapshot is the raw file, with its
// length and its epoch and index in headers; other methods are refused.
func TestHTTPSnapshotDownload(t *testing.T) {
	srv, c := startServer(t, 0)
	if _, err := c.Execute(context.Background(), &pb.ExecuteRequest{Statements: "CREATE TABLE ks.a (id int PRIMARY KEY)"}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + srv.HTTPAddr() + "/v1/snapshot")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/octet-stream" || resp.ContentLength != int64(len(body)) {
		t.Fatalf("GET /v1/snapshot: %d %v, %d bytes of %d, %v", resp.StatusCode, resp.Header, len(body), resp.ContentLength, err)
	}
	got, err := snapshot.Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Metalog-Epoch") != strconv.FormatUint(got.Epoch, 10) || resp.Header.Get("Metalog-Index") != strconv.FormatUint(got.Index, 10) || got.Schema.TableCount() != 1 {
		t.Errorf("headers %v for a snapshot at epoch %d index %d with %d tables", resp.Header, got.Epoch, got.Index, got.Schema.TableCount())
	}
	if resp, err := http.Post("http://"+srv.HTTPAddr()+"/v1/snapshot", "application/json", nil); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /v1/snapshot: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
}
