package main

import (
	"bytes"
	"testing"

	pb "github.com/metalog/metalog/api/metalogpb"
)

func TestEventHeader(t *testing.T) {
	for _, tc := range []struct {
		ev   *pb.Event
		want string
	}{
		{&pb.Event{Epoch: 12, Time: at(0), Principal: "alice", Kind: "CREATE TABLE", Keyspace: "shop", Table: "orders"}, "epoch 12  2026-12-01T10:00:00Z  alice  CREATE TABLE shop.orders"},
		{&pb.Event{Epoch: 3, Kind: "CREATE KEYSPACE", Keyspace: "shop"}, "epoch 3  -  -  CREATE KEYSPACE shop"},
		{&pb.Event{Epoch: 4, Principal: "bob", Kind: "CREATE TYPE", Keyspace: "shop", Name: "address"}, "epoch 4  -  bob  CREATE TYPE shop.address"},
		{&pb.Event{Epoch: 5, Principal: "bob", Kind: "DROP INDEX", Keyspace: "shop", Table: "orders", Name: "by_total"}, "epoch 5  -  bob  DROP INDEX shop.by_total ON orders"},
		{&pb.Event{Epoch: 6, Principal: "ops", Kind: "SET GUARDRAILS"}, "epoch 6  -  ops  SET GUARDRAILS"},
		{&pb.Event{Epoch: 7, Principal: "token:ci", Role: "ddl@shop,ddl@tenant_*", Kind: "CREATE TABLE", Keyspace: "shop", Table: "t"}, "epoch 7  -  token:ci (ddl@shop,ddl@tenant_*)  CREATE TABLE shop.t"},
		{&pb.Event{Epoch: 8, Principal: "ops", Kind: "CREATE INDEX", Keyspace: "x", Table: "t2", Name: "t2_c_idx",
			Cause: &pb.EventCause{Kind: "CREATE TABLE", Keyspace: "x", Table: "t2", Statement: "CREATE TABLE x.t2 LIKE x.u WITH INDEXES"}},
			"epoch 8  -  ops  CREATE INDEX x.t2_c_idx ON t2  (caused by CREATE TABLE x.t2)"},
		{&pb.Event{Epoch: 9, Kind: "DROP TABLE", Keyspace: "KsMixed", Table: "t", Cause: &pb.EventCause{Kind: "DROP KEYSPACE", Keyspace: "KsMixed"}},
			`epoch 9  -  -  DROP TABLE "KsMixed".t  (caused by DROP KEYSPACE "KsMixed")`},
	} {
		if got := eventHeader(tc.ev); got != tc.want {
			t.Errorf("eventHeader(%v) = %q, want %q", tc.ev, got, tc.want)
		}
	}
}

func TestPrintHistoryEventIndentsEachLine(t *testing.T) {
	var b bytes.Buffer
	ev := &pb.Event{Epoch: 6, Principal: "ops", Kind: "SET GUARDRAILS", Statement: "tables_warn_threshold=5\ntables_fail_threshold=9\n"}
	if err := printHistoryEvent(&b, ev); err != nil {
		t.Fatal(err)
	}
	want := "epoch 6  -  ops  SET GUARDRAILS  request -\n    tables_warn_threshold=5\n    tables_fail_threshold=9\n"
	if b.String() != want {
		t.Errorf("printed:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestPrintWatchMessage(t *testing.T) {
	for _, tc := range []struct {
		m        *pb.WatchResponse
		progress bool
		want     string
	}{
		{&pb.WatchResponse{Type: "progress", Epoch: 4}, false, ""},
		{&pb.WatchResponse{Type: "progress", Epoch: 4}, true, "epoch 4  progress\n"},
		{&pb.WatchResponse{Type: "resync", Epoch: 9, Cql: "CREATE KEYSPACE a;\n"}, false,
			"epoch 9  resync: the member no longer keeps the changes asked for; the whole schema at epoch 9 follows, then the changes after it\nCREATE KEYSPACE a;\n"},
		{&pb.WatchResponse{Type: "resync", Epoch: 9}, false,
			"epoch 9  resync: the member no longer keeps the changes asked for; the whole schema at epoch 9 follows, then the changes after it\n"},
		{&pb.WatchResponse{Type: "later", Epoch: 9}, false, "epoch 9  later (a message this metalog does not know)\n"},
	} {
		var b bytes.Buffer
		if err := printWatchMessage(&b, tc.m, tc.progress); err != nil || b.String() != tc.want {
			t.Errorf("printWatchMessage(%v, %v) printed %q, %v; want %q", tc.m, tc.progress, b.String(), err, tc.want)
		}
	}
}
