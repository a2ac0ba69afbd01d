package member

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"syscall"
	"time"

	"github.com/metalog/metalog/internal/diskspace"
)

// ErrNoSpace is matched (errors.Is) by the error of a DDL or guardrail
// change refused because this member's NOSPACE alarm is raised: its data
// dir's filesystem has less free space than Config.MinFreeSpaceBytes, or a
// write failed for lack of space. Nothing of the request was proposed.
var ErrNoSpace = errors.New("member: no space")

// spaceCheckInterval is how often the member checks its data dir's free
// space besides before each append batch, so the alarm also clears when
// nothing is written.
const spaceCheckInterval = time.Second

// spaceAlarm is the member's NOSPACE alarm. It is raised when the data
// dir's filesystem has less than min bytes free (checked before each batch
// the raft log takes in, and every spaceCheckInterval), or when a write of
// the schema store or a snapshot failed with ENOSPC; it clears by itself
// at a check that finds min bytes free again, and no sooner than one
// interval after the last ENOSPC. Its methods are safe for concurrent use.
type spaceAlarm struct {
	dir    string
	min    uint64
	free   func(dir string) (uint64, error) // diskspace.Free; tests put a fault in
	logger *slog.Logger

	mu       sync.Mutex // guards the fields below
	raised   bool
	lastFree uint64    // bytes free at the last check that could measure
	enospc   time.Time // the last write that failed with ENOSPC
	cause    string    // why it was raised, for the error and the log
}

func newSpaceAlarm(dir string, min uint64, free func(string) (uint64, error), logger *slog.Logger) *spaceAlarm {
	if free == nil {
		free = diskspace.Free
	}
	return &spaceAlarm{dir: dir, min: min, free: free, logger: logger}
}

// check measures the free space and raises or clears the alarm; it
// returns the error a write refused by the alarm gets, nil without one.
// It is the raft log's append gate.
func (a *spaceAlarm) check() error {
	free, err := a.free(a.dir)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		// Not measurable (an odd filesystem): the alarm stays as it
		// is, and ENOSPC still raises it.
		a.logger.Debug("free space of the data dir unknown", "dir", a.dir, "err", err)
		return a.errLocked()
	}
	a.lastFree = free
	switch {
	case free < a.min:
		a.raiseLocked(fmt.Sprintf("its filesystem has %d bytes free, less than min_free_space_bytes (%d)", free, a.min))
	case a.raised && time.Since(a.enospc) >= spaceCheckInterval:
		a.raised, a.cause = false, ""
		a.logger.Info("NOSPACE alarm cleared: DDL and guardrail changes are accepted again", "dir", a.dir, "free_bytes", free, "min_free_space_bytes", a.min)
	}
	return a.errLocked()
}

// failedWrite raises the alarm when err says a write found no space, and
// reports whether it did.
func (a *spaceAlarm) failedWrite(what string, err error) bool {
	if !errors.Is(err, syscall.ENOSPC) {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.enospc = time.Now()
	a.raiseLocked(fmt.Sprintf("%s failed: %v", what, err))
	return true
}

func (a *spaceAlarm) raiseLocked(cause string) {
	if !a.raised {
		a.logger.Error("NOSPACE alarm raised: DDL and guardrail changes are refused until space is freed; reads, watch and cluster status go on",
			"dir", a.dir, "cause", cause, "min_free_space_bytes", a.min)
	}
	a.raised, a.cause = true, cause
}

// err is the error of a write refused by the alarm, nil when it is not
// raised. It does not measure: check does.
func (a *spaceAlarm) err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.errLocked()
}

func (a *spaceAlarm) errLocked() error {
	if !a.raised {
		return nil
	}
	return &limitError{limit: ErrNoSpace, msg: fmt.Sprintf(
		"NOSPACE alarm: data dir %s: %s; DDL and guardrail changes are refused until space is freed (reads and watch go on); nothing of this request was applied",
		a.dir, a.cause)}
}

// state reports whether the alarm is raised, why, and the bytes free at
// the last check.
func (a *spaceAlarm) state() (raised bool, cause string, free uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.raised, a.cause, a.lastFree
}

// alarms lists the member's raised alarms by kind, as cluster status
// shows them.
func (a *spaceAlarm) alarms() []string {
	if raised, _, _ := a.state(); raised {
		return []string{"NOSPACE"}
	}
	return nil
}

// watchSpace checks the free space every spaceCheckInterval until stop
// is closed (the member stops). A leader whose alarm is raised hands the
// leadership to a voter without one, so that the cluster takes DDL again
// while this member has no space for it.
func (c *core) watchSpace(stop <-chan struct{}) {
	t := time.NewTicker(spaceCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if c.space.check() != nil && c.node.Status().Leader == c.id {
			c.handOffLeadership()
		}
	}
}

// handOffLeadership asks the other voters for their status and transfers
// the leadership to the one without an alarm that applied the most; with
// none, this member stays leader and keeps refusing DDL.
func (c *core) handOffLeadership() {
	ctx, cancel := context.WithTimeout(c.peerContext(context.Background()), statusTimeout)
	defer cancel()
	var to uint64
	var best *MemberStatus
	for _, p := range c.node.Members() {
		if p.ID == c.id || p.Learner {
			continue
		}
		info, err := parseMemberInfo(p.Context)
		if err != nil {
			continue
		}
		got, err := askStatus(ctx, c.peerDial, info.PeerAddr)
		if err != nil || len(got.Alarms) > 0 {
			continue
		}
		if best == nil || got.AppliedIndex > best.AppliedIndex {
			to, best = p.ID, got
		}
	}
	if best == nil {
		c.logger.Debug("NOSPACE alarm on the leader, and no other voter without an alarm answered to take the leadership")
		return
	}
	c.logger.Warn("NOSPACE alarm on the leader: handing the leadership to a member with space", "to", best.Name)
	c.node.TransferLeadership(to)
}
