//go:build !unix

package raftlog

import (
	"os"
	"time"
)

// lockFile does nothing where bbolt's lock is not a flock: the check
// runs unlocked.
func lockFile(*os.File, bool, time.Duration) error { return nil }
