//go:build unix

package raftlog

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// lockFile takes f's flock (as bbolt does), exclusive or shared, trying
// again every 50ms for at most timeout (then ErrLocked). Closing f
// releases it.
func lockFile(f *os.File, exclusive bool, timeout time.Duration) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return err
		}
		if time.Now().After(deadline) {
			return ErrLocked
		}
		time.Sleep(50 * time.Millisecond)
	}
}
