// Package loopback tells whether an address is reachable from this machine
// only. The API uses it to refuse unprotected listeners off loopback (the
// safe defaults), the client to refuse sending a bearer token in plaintext
// off loopback; one rule for both.
//
//	loopback.Is("127.0.0.1:7070") // true
//	loopback.Is("0.0.0.0:7070")   // false: every interface
//
// It owns that rule only: what to do about an address off loopback is the
// caller's.
package loopback
