// Package integration holds metalog's end-to-end tests: they build the
// metalog binary once and run real server processes on loopback ports in
// temporary directories.
//
// Every test bounds its own run time and stops the processes it started.
// The whole package is slow; run one test with -run, and -short scales a
// few of the longest down.
//
//	go test ./integration/ -run TestName
package integration
