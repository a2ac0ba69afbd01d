#!/usr/bin/env bash
# Regenerates peer.pb.go and peer_grpc.pb.go from peer.proto.
# Needs protoc (Debian package protobuf-compiler; installed when missing)
# and installs the plugins at the versions pinned below (the same as
# scripts/genproto). protoc runs from the module root, so that the file
# registers as member/internal/peerrpc/peer.proto, apart from raftlog's
# peer.proto.
set -euo pipefail
cd "$(dirname "$0")/../../.."

PROTOC_GEN_GO=v1.36.12
PROTOC_GEN_GO_GRPC=v1.6.2

if ! command -v protoc >/dev/null; then
  apt-get update -qq && apt-get install -y -qq protobuf-compiler
fi
bin="$(go env GOPATH)/bin"
go install "google.golang.org/protobuf/cmd/protoc-gen-go@${PROTOC_GEN_GO}"
go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@${PROTOC_GEN_GO_GRPC}"

PATH="$bin:$PATH" protoc -I . \
  --go_out=. --go_opt=paths=source_relative \
  --go-grpc_out=. --go-grpc_opt=paths=source_relative \
  member/internal/peerrpc/peer.proto
echo "generated: member/internal/peerrpc/peer.pb.go peer_grpc.pb.go"
