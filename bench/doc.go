// Package bench measures metalog the way operators see it: it starts a local
// cluster of real `metalog serve` processes on loopback (fsync on), drives it
// through the Go client, and reports figures comparable with the etcd peer
// benchmark's (BENCHMARKS.md says where that program is and how to run it).
//
// Tables times serialised schema writes (and may target a running cluster
// through TablesOptions.Endpoints instead); Watch the change feed; Restart,
// Catchup and Rebuild a member's recovery. `metalog bench` is the
// command-line front end.
//
//	res, err := bench.Tables(ctx, bench.TablesOptions{Binary: exe, Nodes: 3, Tables: 10000, Clients: 1})
//	json.NewEncoder(os.Stdout).Encode(res)
package bench
