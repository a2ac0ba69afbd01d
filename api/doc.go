// Package api serves a member to clients: the gRPC service
// metalog.v1.MetadataService (with reflection), the same methods as JSON
// over HTTP through grpc-gateway, and /metrics, /healthz and /readyz.
//
// It owns what a request goes through: authentication and roles, the
// per-connection, request-size and stream limits, the member's identity
// on every answer, and thin handlers that check formats, call the member
// through the narrow slice they need (Writer, Reader, ClusterAdmin,
// Readier, Identifier: a Backend; MemberBackend gives a running member's)
// and map its errors with package apierr's table. It does not own the
// process: package server loads the configuration and the TLS and token
// material, binds the listeners and builds its servers with New,
// Handlers.NewGRPCServer and Handlers.NewGateway.
//
// The protobuf definitions are in metalog.proto and the HTTP rules in
// gateway.yaml (regenerate metalogpb with scripts/genproto); the HTTP side
// also reads gateway.yaml, embedded, to answer a wrong method with 405 and
// Allow and to refuse query parameters a path does not take.
package api
