// Package metalogpb is the generated Go code of api/metalog.proto: the
// messages and gRPC services of metalog's client API
// (metalog.v1.MetadataService) and peer RPCs (metalog.v1.PeerService), and
// the grpc-gateway HTTP handlers of the rules in api/gateway.yaml.
//
// It is the wire format and nothing else; the comments in the .proto
// document it. Do not edit the .pb.go files: change the .proto or
// gateway.yaml and run scripts/genproto.
package metalogpb
