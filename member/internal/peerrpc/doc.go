// Package peerrpc is the gRPC side of the member-to-member service,
// PeerService (peer.proto): the server that answers peers with gRPC
// statuses, the peer port's interceptors that admit current members only,
// and the client calls that read a peer's status back into an error of
// the peer protocol (*Error). Package member implements Handler and calls
// the client functions; it imports neither grpc/status nor grpc/codes.
//
// The service keeps the wire it had when it was part of the client API:
// package metalog.v1, service PeerService, the same field numbers.
//
//	srv := grpc.NewServer(peerrpc.ServerOptions(h)...)
//	peerrpc.Register(srv, h)
//	resp, err := peerrpc.Repair(ctx, creds, peerAddr, "n2")
//	if errors.Is(err, peerrpc.ErrUnreachable) { ... }
//
// Do not edit the .pb.go files: change peer.proto and run gen.sh (or
// scripts/genproto).
package peerrpc
