// Package integration holds end-to-end tests that build the metalog binary
// and run real server processes on loopback ports in temporary directories.
//
// Every test bounds its own run time and stops the processes it started.
//
//	go test ./integration/
package integration
