// Package metalogpb is the generated Go code of api/metalog.proto: the
// messages, the gRPC services metalog.v1.MetadataService (clients) and
// metalog.v1.PeerService (member to member), and the grpc-gateway HTTP
// handlers of the rules in api/gateway.yaml.
//
// Do not edit the .pb.go files: change the .proto or gateway.yaml and run
// scripts/genproto. The package owns the wire format of the client API
// and of the peer RPCs, nothing else; the client package and the API
// server are built on it.
package metalogpb
