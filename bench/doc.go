// Package bench measures metalog the way operators would see it: it starts
// a local cluster of real `metalog serve` processes on loopback (fsync on),
// drives DDL through the Go client (package client), and reports the same
// figures as the etcd peer benchmark (a separate program running a real
// etcd cluster; BENCHMARKS.md says where it is and how to run it), so both
// can be compared side by side.
//
//	res, err := bench.Tables(ctx, bench.TablesOptions{Binary: exe, Nodes: 3, Tables: 10000, Clients: 1})
//	json.NewEncoder(os.Stdout).Encode(res)
//
// `metalog bench` is the command-line front end.
package bench
