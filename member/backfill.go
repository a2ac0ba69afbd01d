package member

import (
	"context"
	"fmt"
	"time"

	"github.com/metalog/metalog/member/internal/peerrpc"
)

// History copying: a member rebuilt from a snapshot (a new member, one far
// behind, a repaired one) lacks the records of the epochs the snapshot
// covers; it copies them from another member, which serves them on
// PeerService.HistoryRecords.
const (
	// maxHistoryRecvBytes bounds a chunk a member accepts: one record
	// (a dropped keyspace's, at most) is below max_mutation_size.
	maxHistoryRecvBytes = 256 << 20
	// historyCopyTimeout bounds one copy from one peer.
	historyCopyTimeout = time.Minute
	// historyRetryPause is the wait after a round in which no peer could
	// give the missing history.
	historyRetryPause = time.Second
)

// copyHistory runs until stop is closed: whenever the state machine
// lacks history (HistoryGap), it copies it from the other members, the
// leader first. Without a gap it sleeps until a publish leaves one
// (HistoryGapSignal), not at every epoch.
func (c *core) copyHistory(stop <-chan struct{}) {
	for {
		if _, to := c.sm.HistoryGap(); to == 0 {
			select {
			case <-c.sm.HistoryGapSignal():
				continue
			case <-stop:
				return
			}
		}
		if err := c.copyHistoryRound(stop); err != nil {
			c.logger.Warn("could not copy the missing history from the other members; retrying", "err", err)
			select {
			case <-time.After(historyRetryPause):
			case <-stop:
				return
			}
		}
	}
}

// copyHistoryRound asks each other member in turn, the leader first, for
// the missing history, until none is missing.
func (c *core) copyHistoryRound(stop <-chan struct{}) error {
	leader := c.node.Status().Leader
	members := c.node.Members()
	var errs []error
	for _, pass := range []bool{true, false} {
		for _, p := range members {
			if p.ID == c.id || (p.ID == leader) != pass {
				continue
			}
			info, err := parseMemberInfo(p.Context)
			if err != nil {
				continue
			}
			err = c.copyHistoryFrom(info, stop)
			if _, to := c.sm.HistoryGap(); to == 0 {
				return nil
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", info.Name, err))
			}
		}
	}
	if len(errs) == 0 {
		return fmt.Errorf("no other member to copy from")
	}
	return fmt.Errorf("%v", errs)
}

// copyHistoryFrom copies what one member has of the missing history
// (the chunks' bounds are peerrpc's).
func (c *core) copyHistoryFrom(info memberInfo, stop <-chan struct{}) error {
	from, to := c.sm.HistoryGap()
	ctx, cancel := context.WithTimeout(c.peerContext(context.Background()), historyCopyTimeout)
	defer cancel()
	go func() { // the member closing ends the copy
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return peerrpc.CopyHistory(ctx, c.peerDial, info.PeerAddr, from, to, maxHistoryRecvBytes, func(records [][]byte, oldest uint64) (bool, error) {
		_, left, err := c.sm.FillHistory(records, oldest)
		return left == 0, err
	})
}
