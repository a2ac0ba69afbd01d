//go:build !metalog_faults

package member

import "github.com/metalog/metalog/raftlog"

// peerFaults is the fault injector of the peer transport: Config.peerFaults
// (this package's tests) only. A build without the metalog_faults tag, as
// every production binary is, reads no fault file (faulthook.go), so no
// environment can partition it.
func (c *core) peerFaults() raftlog.Faults { return c.cfg.peerFaults }

// followFaultFile does nothing: only a metalog_faults build has a fault
// file to follow.
func followFaultFile(*Member) {}
