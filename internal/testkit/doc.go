// Package testkit holds the pieces that the tests of many packages share:
// a test certificate authority, a fake MetadataService served on
// loopback, and a wait for an agreed leader.
//
// It is for tests only, and imports nothing of metalog but the generated
// protobuf, so that the in-package tests of raftlog, member, api and
// server can use it without an import cycle. The pieces that need more
// live in sub-packages, each imported only by the tests that need it:
// schematest (rapid generators of valid schemas), schemakit (parse CQL and
// apply it to a schema) and serverkit (a one-member server in-process).
//
//	ca := testkit.NewCA(t, "clients")
//	certFile, keyFile := ca.IssueFiles(t, "server", "metalog-server")
//	addr := testkit.Serve(t, &testkit.Fake{Err: status.Error(codes.Unavailable, "no leader")})
package testkit
