//go:build unix

package server

import "syscall"

// openFileLimit is the process's limit of open files (the soft
// RLIMIT_NOFILE, which Go raises to the hard one at start), 0 when unknown.
func openFileLimit() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	return lim.Cur
}
