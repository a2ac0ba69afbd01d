package bench

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel stop a member the benchmark started when
// the benchmark itself dies, even by SIGKILL, so that no member is left
// running (and eating the CPU of the next measurement).
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
