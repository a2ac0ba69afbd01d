// Package api is metalog's client surface: the handlers of the gRPC
// service metalog.v1.MetadataService (with server reflection), the same
// methods as JSON over HTTP through grpc-gateway, and /metrics, /healthz
// and /readyz.
//
// It owns what a request goes through: authentication and roles (bearer
// tokens and client certificates, looked up through AuthOptions), the
// per-connection and request-size limits, the stream limits, the
// member's identity on every answer, the gateway and its error forms, and
// thin handlers that check what is theirs to check (formats), call the
// member and map its errors to gRPC codes (package apierr).
//
// It does not own the process: package server reads the configuration
// file, loads and reloads the TLS material and the token file, binds the
// listeners (with their TLS, connection caps and timeouts), starts the
// member and stops it, and builds its servers from the constructors here:
// New with the member and Options, Handlers.NewGRPCServer for the gRPC
// listener and Handlers.NewGateway for the HTTP one. The handlers see the
// member through narrow interfaces, one per service of the member (Writer,
// Reader, ClusterAdmin) plus its readiness (Readier) and identity
// (Identifier), gathered in a Backend (MemberBackend gives a running
// member's); each handler uses its slice alone. Parsing CQL, the raft
// log, snapshots, guardrails and membership are the member's and the
// layers' below it; the handlers are tested with a fake of the slices.
//
//	h, err := api.New(api.MemberBackend(m), api.Options{Registry: reg, MaxRequestBytes: 1 << 20, ...})
//	if err != nil {
//		return err
//	}
//	grpcSrv := h.NewGRPCServer(grpc.Creds(creds))
//	gw, err := h.NewGateway()
//	if err != nil {
//		return err
//	}
//	go grpcSrv.Serve(grpcLis)
//	go gw.Serve()
//	go gw.HTTP.Serve(httpLis)
//
// The protobuf definitions are in metalog.proto, the HTTP rules in
// gateway.yaml, and the generated code in metalogpb (regenerate with
// scripts/genproto). gateway.yaml is also embedded: the HTTP side reads
// its rules, with the request fields of the generated descriptors, to
// answer a wrong method with 405 and Allow and to refuse query parameters
// a path does not take.
package api
