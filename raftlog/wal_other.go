//go:build !linux

package raftlog

import (
	"errors"
	"os"
)

func fdatasync(f *os.File) error { return f.Sync() }

func preallocate(f *os.File, off, n int64) error { return errors.ErrUnsupported }
