package raftlog_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/metalog/metalog/raftlog"
)

// upper is a toy state machine: it answers each command in upper case.
type upper struct{ results []raftlog.Result }

func (u *upper) Apply(entries []raftlog.Entry) []raftlog.Result {
	u.results = u.results[:0]
	for _, e := range entries {
		u.results = append(u.results, raftlog.Result{Value: strings.ToUpper(string(e.Data))})
	}
	return u.results
}

func ExampleStart() {
	dir, err := os.MkdirTemp("", "raftlog-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	n, err := raftlog.Start(raftlog.Config{
		ID:      1,
		Peers:   []raftlog.Peer{{ID: 1}}, // bootstraps the new log in dir
		Dir:     dir,
		Applier: &upper{},
		Applied: 0, // a new state machine: replay the whole log
		Metrics: raftlog.NewMetrics(prometheus.NewRegistry()),
	})
	if err != nil {
		panic(err)
	}
	defer n.Stop()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := n.Propose(ctx, []byte("create table t"))
	fmt.Println(v, err)
	// Output: CREATE TABLE T <nil>
}
