//go:build !linux

package bench

import (
	"errors"
	"os/exec"
)

// dieWithParent does nothing where the kernel has no parent-death
// signal: the benchmark's own cleanup stops its members.
func dieWithParent(*exec.Cmd) {}

// procCountersMeasured says whether readProcCounters reads real figures
// on this system: without /proc it does not.
const procCountersMeasured = false

// errNoProc is returned where a process's counters would be read from
// /proc, on a system that has none.
var errNoProc = errors.New("bench: no /proc on this system: CPU time and context switches are not measured")

// cpuSeconds returns errNoProc: there is no /proc to read.
func cpuSeconds(int) (float64, error) { return 0, errNoProc }

// readProcCounters returns zero counters: there is no /proc to read, and
// the server load figures say so (see serverLoadNote).
func readProcCounters(int) (procCounters, error) { return procCounters{}, nil }
