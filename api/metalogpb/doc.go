// Package metalogpb is the generated Go code of api/metalog.proto: the
// messages, the gRPC service metalog.v1.MetadataService (clients), and
// the grpc-gateway HTTP handlers of the rules in api/gateway.yaml. The
// member-to-member service, metalog.v1.PeerService, is internal to
// package member (member/internal/peerrpc).
//
// Do not edit the .pb.go files: change the .proto or gateway.yaml and run
// scripts/genproto. The package owns the wire format of the client API,
// nothing else; the client package and the API server are built on it.
package metalogpb
