// Package peerpb is the generated Go code of peer.proto, the gRPC service
// raftlog's Transport sends snapshots between members on, in chunks.
//
// The raft log traffic does not use it: it runs on raftlog's own stream
// beside it. Do not edit the .pb.go files: change peer.proto and run gen.sh
// (scripts/genproto runs it too).
package peerpb
