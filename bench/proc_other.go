//go:build !linux

package bench

import "os/exec"

// dieWithParent does nothing where the kernel has no parent-death
// signal: the benchmark's own cleanup stops its members.
func dieWithParent(*exec.Cmd) {}
