// Package api is metalog's client surface: the gRPC service
// metalog.v1.MetadataService (with server reflection), the same methods as
// JSON over HTTP through grpc-gateway, and /metrics, /healthz and /readyz.
//
// It owns the operator's configuration file (Config), the client
// listeners, the TLS material of every listener and the bearer tokens
// (reloaded on SIGHUP and when the files change), authentication and
// roles, the per-connection and request-size limits, the stream limits,
// the connection caps and timeouts, the gateway, and thin
// handlers that check what is theirs to check (formats), call the member
// and map its errors to gRPC codes (package apierr).
//
// It does not own the member: Start binds the client listeners, then
// starts a member.Member with the member's part of the configuration and
// serves it through the Backend interface. Parsing CQL, the raft log,
// snapshots, guardrails and membership are the member's and the layers'
// below it; the handlers are tested with a fake Backend.
//
//	cfg := api.DefaultConfig()
//	cfg.DataDir = dir
//	srv, err := api.Start(cfg, logger)
//	if err != nil {
//		return err
//	}
//	defer srv.Close(ctx)
//
// The protobuf definitions are in metalog.proto, the HTTP rules in
// gateway.yaml, and the generated code in metalogpb (regenerate with
// scripts/genproto). gateway.yaml is also embedded: the HTTP side reads
// its rules, with the request fields of the generated descriptors, to
// answer a wrong method with 405 and Allow and to refuse query parameters
// a path does not take.
package api
