// Package loopback tells whether an address is reachable from this machine
// only.
//
// It is the one rule behind the server's refusal of unprotected listeners
// off loopback and the client's refusal to send a bearer token in plaintext
// off loopback; what to do about such an address is the caller's.
//
//	loopback.Is("127.0.0.1:7070") // true
//	loopback.Is("0.0.0.0:7070")   // false: every interface
package loopback
