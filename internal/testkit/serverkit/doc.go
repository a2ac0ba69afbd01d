// Package serverkit starts a one-member metalog server in the test's own
// process, as package server assembles it, on loopback ports the kernel
// picks and in a temporary directory.
//
// It is a package of its own because it imports server (and so api and
// member): the in-package tests of those cannot import it, and the tests
// that need no server do not pull it in.
//
//	srv := serverkit.New(t) // closed when the test ends
//	conn, err := grpc.NewClient(srv.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
//
// A TestMain, which has no testing.TB, calls Start and Stop instead.
package serverkit
