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
	"github.com/metalog/metalog/internal/cqltext"
	"github.com/metalog/metalog/internal/safetext"
	"github.com/metalog/metalog/schema"
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

// objectName names what a statement of kind changed as exec prints it:
// ks, ks.table, ks.type, ks.function(types), ks.index ON table, trigger ON
// ks.table; empty for a guardrail change. Each name is spelled as CQL
// reads it (cqltext.QuoteIdentifier: mixed case, reserved words and other
// characters in double quotes; a type's name also when it is a native
// type's), so that what is printed, pasted into a statement or given to
// describe, history or watch, finds the object.
func objectName(kind, keyspace, table, name string) string {
	ks, tb, nm := quoteName(keyspace), quoteName(table), quoteName(name)
	switch {
	case strings.HasSuffix(kind, " TYPE"):
		nm = schema.QuoteTypeName(name)
	case strings.HasSuffix(kind, " FUNCTION") || strings.HasSuffix(kind, " AGGREGATE"):
		nm = cqltext.QuoteSignature(name)
	case strings.HasSuffix(kind, " TRIGGER") && name != "" && table != "":
		return nm + " ON " + ks + "." + tb
	}
	obj := ks
	switch {
	case name != "" && table != "":
		obj += "." + nm + " ON " + tb
	case name != "":
		obj += "." + nm
	case table != "":
		obj += "." + tb
	}
	return obj
}

// quoteName is cqltext.QuoteIdentifier, except that no name stays empty.
func quoteName(name string) string {
	if name == "" {
		return ""
	}
	return cqltext.QuoteIdentifier(name)
}

// eventHeader is the line that introduces an event: epoch, time (UTC, to
// the second), principal (with the scoped role it used, if any) and what
// changed, e.g.
// "epoch 12  2026-12-01T10:00:00Z  token:ci (ddl@shop)  CREATE TABLE shop.orders".
// An unknown time or principal (entries from before they were recorded)
// is "-". The principal and role are fields (safetext.Field: quoted when
// they hold white space or a character a terminal would obey), and what
// changed is escaped on its line (safetext.Line), so that no stored text
// can end the line early or pass for another field.
func eventHeader(ev *pb.Event) string {
	when, who := "-", safetext.Field(ev.Principal)
	if ev.Time != nil {
		when = ev.Time.AsTime().UTC().Format(time.RFC3339)
	}
	if ev.Principal == "" {
		who = "-"
	}
	if ev.Role != "" {
		who += " (" + safetext.Field(ev.Role) + ")"
	}
	what := strings.TrimSpace(ev.Kind + " " + objectName(ev.Kind, ev.Keyspace, ev.Table, ev.Name))
	if ev.Scope != nil {
		what += " keyspace " + ev.GetScope() // a per-keyspace guardrail override
	}
	if c := ev.GetCause(); c != nil {
		// A derived event: the statement that made it names another object.
		what += "  (caused by " + strings.TrimSpace(c.GetKind()+" "+objectName(c.GetKind(), c.GetKeyspace(), c.GetTable(), c.GetName())) + ")"
	}
	return fmt.Sprintf("epoch %d  %s  %s  %s", ev.Epoch, when, who, safetext.Line(what))
}

// printHistoryEvent prints one event of history: its header with the
// request id (a field, safetext.Field), then its statement indented by
// four spaces, escaped (safetext.Block), so that only the header starts
// at the line's start.
func printHistoryEvent(w io.Writer, ev *pb.Event) error {
	id := safetext.Field(ev.RequestId)
	if ev.RequestId == "" {
		id = "-"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s  request %s\n", eventHeader(ev), id)
	for line := range strings.Lines(ev.Statement) {
		b.WriteString("    ")
		b.WriteString(safetext.Block(strings.TrimRight(line, "\n")))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// printWatchMessage prints one message of watch: a line per event, a
// resync's note and CQL, and a progress line only when progress is set.
func printWatchMessage(w io.Writer, m *pb.WatchResponse, progress bool) error {
	var b strings.Builder
	switch client.WatchTypeOf(m) {
	case client.WatchEvents:
		for _, ev := range m.Events {
			b.WriteString(eventHeader(ev))
			b.WriteByte('\n')
		}
	case client.WatchResync:
		fmt.Fprintf(&b, "epoch %d  resync: the member no longer keeps the changes asked for; the whole schema at epoch %d follows, then the changes after it\n", m.Epoch, m.Epoch)
		b.WriteString(escapedCQL(m.Cql, "watch --json"))
		if m.Cql != "" && !strings.HasSuffix(m.Cql, "\n") {
			b.WriteByte('\n')
		}
	case client.WatchProgress:
		if progress {
			fmt.Fprintf(&b, "epoch %d  progress\n", m.Epoch)
		}
	default:
		fmt.Fprintf(&b, "epoch %d  %s (a message this metalog does not know)\n", m.Epoch, safetext.Field(m.Type))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// escapedCQL returns CQL text (DESCRIBE output, a plan) for the terminal:
// the text itself when it holds nothing a terminal would obey; otherwise
// the text with those characters escaped (safetext.Block), after a CQL
// comment that says so and, unless exact is "", which command prints the
// exact text.
// CQL has no escapes in its string constants, so no valid CQL both shows
// such a character escaped and re-creates it: the output stays valid CQL,
// and the comment tells whoever runs it that a string it holds is not
// what is stored.
func escapedCQL(text, exact string) string {
	esc := safetext.Block(text)
	if esc == text {
		return text
	}
	note := "-- metalog: control or bidirectional formatting characters in this text are shown escaped (\\x1b, \\u202e): it does not re-create them"
	if exact != "" {
		note += "; " + exact + " prints the text as stored"
	}
	return note + "\n" + esc
}
