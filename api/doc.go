// Package api is metalog's client surface: the gRPC service
// metalog.v1.MetadataService (with server reflection), the same methods as
// JSON over HTTP through grpc-gateway, and /metrics, /healthz and /readyz.
//
// Start assembles a member from the layers below (the metadata state
// machine and the raft node) and serves it:
//
//	cfg := api.DefaultConfig()
//	cfg.DataDir = dir
//	srv, err := api.Start(cfg, logger)
//	...
//	defer srv.Close(ctx)
//
// The protobuf definitions are in metalog.proto, the HTTP rules in
// gateway.yaml, and the generated code in metalogpb (regenerate with
// scripts/genproto).
package api
