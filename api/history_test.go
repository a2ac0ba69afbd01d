package api

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// TestHTTPHistoryWatchAndAtEpoch: the history, the feed and the schema at
// an epoch over HTTP, through the gateway, in the contract's forms.
func TestHTTPHistoryWatchAndAtEpoch(t *testing.T) {
	srv, c := startServer(t, 0)
	base := "http://" + srv.HTTPAddr()
	ctx := context.Background()
	if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.t (id int PRIMARY KEY)"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "ALTER TABLE ks.t ADD v text"}); err != nil {
		t.Fatal(err)
	}

	code, body := get(t, base+"/v1/history?from_epoch=1&keyspace=ks&table=t&limit=1")
	var page struct {
		Events []struct {
			Epoch, Kind, Principal, Statement, Before, After, Time string
		}
		NextEpoch   string `json:"next_epoch"`
		OldestEpoch string `json:"oldest_epoch"`
	}
	if err := json.Unmarshal([]byte(body), &page); code != 200 || err != nil {
		t.Fatalf("history: %d %s %v", code, body, err)
	}
	if len(page.Events) != 1 || page.Events[0].Epoch != "2" || page.Events[0].Kind != "CREATE TABLE" || page.NextEpoch != "2" ||
		page.Events[0].Principal != Anonymous || page.Events[0].Before != "" || !strings.Contains(page.Events[0].After, "CREATE TABLE ks.t") ||
		page.Events[0].Time == "" || page.OldestEpoch != "1" {
		t.Fatalf("history page: %s", body)
	}

	code, body = get(t, base+"/v1/schema?at_epoch=2&format=cql")
	if code != 200 || !strings.Contains(body, "CREATE TABLE ks.t") || strings.Contains(body, "v text") || !strings.Contains(body, `"epoch":"2"`) {
		t.Fatalf("schema at epoch 2: %d %s", code, body)
	}
	if code, body = get(t, base+"/v1/keyspaces/ks/tables/t?at_epoch=1"); code != 404 || !strings.Contains(body, "epoch 1") {
		t.Fatalf("table at epoch 1, before it was created: %d %s", code, body)
	}
	if code, body = get(t, base+"/v1/schema?at_epoch=2&min_epoch=3"); code != 400 || !strings.Contains(body, "exclude each other") {
		t.Fatalf("at_epoch with min_epoch: %d %s", code, body)
	}

	if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "DROP TABLE ks.t"}); err != nil {
		t.Fatal(err)
	}
	// The feed, streamed: one JSON object per line.
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(rctx, "GET", base+"/v1/watch?from_epoch=1&keyspace=ks", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	var got []string
	for len(got) < 3 {
		if !lines.Scan() {
			t.Fatalf("stream ended after %q: %v", got, lines.Err())
		}
		var msg struct {
			Result struct {
				Type   string
				Epoch  string
				Events []struct{ Kind, Epoch string }
			}
		}
		if err := json.Unmarshal(lines.Bytes(), &msg); err != nil || msg.Result.Type != "events" {
			t.Fatalf("line %s (%v), want events", lines.Text(), err)
		}
		for _, e := range msg.Result.Events {
			got = append(got, e.Epoch+" "+e.Kind)
		}
	}
	if strings.Join(got, ", ") != "2 CREATE TABLE, 3 ALTER TABLE, 4 DROP TABLE" {
		t.Fatalf("streamed events %q", got)
	}
}

// TestHTTPWatchRefusedForm: a watch refused before its first message, as
// one naming another history id, answers the error table's HTTP status
// with one JSON line {"error": {code, message, details}}, the form every
// line of the stream has ({"result": ...} or {"error": ...}).
func TestHTTPWatchRefusedForm(t *testing.T) {
	srv, _ := startServer(t, 0)
	code, body := get(t, "http://"+srv.HTTPAddr()+"/v1/watch?from_epoch=0&history_id=abc123")
	var line struct {
		Error struct {
			Code    int
			Message string
			Details []struct {
				Reason   string
				Metadata map[string]string
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &line); err != nil || code != http.StatusBadRequest {
		t.Fatalf("watch naming another history: %d %s (%v)", code, body, err)
	}
	if e := line.Error; e.Code != 9 || len(e.Details) != 1 || e.Details[0].Reason != "HISTORY_CHANGED" ||
		e.Details[0].Metadata["requested_history_id"] != "abc123" || !strings.Contains(e.Message, "abc123") {
		t.Fatalf("watch naming another history: %s", body)
	}
}
