package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// dieWithParent has the kernel stop a member the benchmark started when
// the benchmark itself dies, even by SIGKILL, so that no member is left
// running (and eating the CPU of the next measurement).
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}

// procCountersMeasured says whether readProcCounters reads real figures
// on this system.
const procCountersMeasured = true

// cpuSeconds reads the user and system CPU time a process has used, from
// /proc/PID/stat (utime and stime, in the kernel's fixed USER_HZ of 100
// ticks a second).
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command's closing parenthesis start at the
	// state, field 3; utime and stime are fields 14 and 15.
	var fields []string
	if i := strings.LastIndexByte(string(b), ')'); i >= 0 {
		fields = strings.Fields(string(b[i+1:]))
	}
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q has no utime and stime", pid, b)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return float64(ticks) / 100, nil
}

// ctxSwitches reads the voluntary and nonvoluntary context switches of
// every thread of a process so far, summed. /proc/PID/status counts the
// main thread's alone, so each /proc/PID/task/TID/status is read (a thread
// that has exited takes its count with it; the Go runtime seldom ends one).
func ctxSwitches(pid int) (int64, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, err
	}
	var total int64
	for _, task := range tasks {
		n, err := taskCtxSwitches(fmt.Sprintf("/proc/%d/task/%s/status", pid, task.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue // the thread ended in between
		}
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// taskCtxSwitches reads voluntary_ctxt_switches plus
// nonvoluntary_ctxt_switches from one status file.
func taskCtxSwitches(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var total int64
	seen := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "voluntary_ctxt_switches" && name != "nonvoluntary_ctxt_switches") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %s: %w", path, name, err)
		}
		total += n
		seen++
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if seen != 2 {
		return 0, fmt.Errorf("%s has no voluntary_ctxt_switches and nonvoluntary_ctxt_switches", path)
	}
	return total, nil
}

// readProcCounters reads a process's CPU time and context switches so far.
func readProcCounters(pid int) (procCounters, error) {
	cpu, err := cpuSeconds(pid)
	if err != nil {
		return procCounters{}, err
	}
	cs, err := ctxSwitches(pid)
	if err != nil {
		return procCounters{}, err
	}
	return procCounters{CPUSeconds: cpu, CtxSwitches: cs}, nil
}
