// Package peerpb is the generated Go code of the raft transport's gRPC
// service (peer.proto): the snapshot stream between members, in chunks.
// The raft log traffic itself runs on raftlog's own stream beside it.
//
// Do not edit the .pb.go files: change peer.proto and run gen.sh (or
// scripts/genproto). Only raftlog uses it.
package peerpb
