package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

// jsonOptions are those of the HTTP API's answers: the proto field names
// (request_id, next_epoch) and every field present.
var jsonOptions = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

// printJSONLine prints m as one line of JSON (protojson varies its
// spacing on purpose; the line is compacted so that it is stable).
func printJSONLine(w io.Writer, m proto.Message) error {
	b, err := jsonOptions.Marshal(m)
	if err != nil {
		return err
	}
	var line bytes.Buffer
	if err := json.Compact(&line, b); err != nil {
		return err
	}
	line.WriteByte('\n')
	_, err = w.Write(line.Bytes())
	return err
}

// objectName names what a statement changed as exec prints it: ks,
// ks.table, ks.type or ks.index ON table; empty for a guardrail change.
func objectName(keyspace, table, name string) string {
	obj := keyspace
	switch {
	case name != "" && table != "":
		obj += "." + name + " ON " + table
	case name != "":
		obj += "." + name
	case table != "":
		obj += "." + table
	}
	return obj
}

// eventHeader is the line that introduces an event: epoch, time (UTC, to
// the second), principal (with the scoped role it used, if any) and what
// changed, e.g.
// "epoch 12  2026-12-01T10:00:00Z  token:ci (ddl@shop)  CREATE TABLE shop.orders".
// An unknown time or principal (entries from before they were recorded)
// is "-".
func eventHeader(ev *pb.Event) string {
	when, who := "-", ev.Principal
	if ev.Time != nil {
		when = ev.Time.AsTime().UTC().Format(time.RFC3339)
	}
	if who == "" {
		who = "-"
	}
	if ev.Role != "" {
		who += " (" + ev.Role + ")"
	}
	what := strings.TrimSpace(ev.Kind + " " + objectName(ev.Keyspace, ev.Table, ev.Name))
	if ev.Scope != nil {
		what += " keyspace " + ev.GetScope() // a per-keyspace guardrail override
	}
	return fmt.Sprintf("epoch %d  %s  %s  %s", ev.Epoch, when, who, what)
}

// printHistoryEvent prints one event of history: its header with the
// request id, then its statement indented by four spaces.
func printHistoryEvent(w io.Writer, ev *pb.Event) error {
	id := ev.RequestId
	if id == "" {
		id = "-"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s  request %s\n", eventHeader(ev), id)
	for line := range strings.Lines(ev.Statement) {
		b.WriteString("    ")
		b.WriteString(strings.TrimRight(line, "\n"))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// printWatchMessage prints one message of watch: a line per event, a
// resync's note and CQL, and a progress line only when progress is set.
func printWatchMessage(w io.Writer, m *pb.WatchResponse, progress bool) error {
	var b strings.Builder
	switch m.Type {
	case client.WatchEvents:
		for _, ev := range m.Events {
			b.WriteString(eventHeader(ev))
			b.WriteByte('\n')
		}
	case client.WatchResync:
		fmt.Fprintf(&b, "epoch %d  resync: the member no longer keeps the changes asked for; the whole schema at epoch %d follows, then the changes after it\n", m.Epoch, m.Epoch)
		b.WriteString(m.Cql)
		if m.Cql != "" && !strings.HasSuffix(m.Cql, "\n") {
			b.WriteByte('\n')
		}
	case client.WatchProgress:
		if progress {
			fmt.Fprintf(&b, "epoch %d  progress\n", m.Epoch)
		}
	default:
		fmt.Fprintf(&b, "epoch %d  %s (a message this metalog does not know)\n", m.Epoch, m.Type)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
