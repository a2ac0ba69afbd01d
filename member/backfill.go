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
func (ms *membership) copyHistory(stop <-chan struct{}) {
	for {
		if _, to := ms.sm.HistoryGap(); to == 0 {
			select {
			case <-ms.sm.HistoryGapSignal():
				continue
			case <-stop:
				return
			}
		}
		if err := ms.copyHistoryRound(stop); err != nil {
			ms.logger.Warn("could not copy the missing history from the other members; retrying", "err", err)
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
func (ms *membership) copyHistoryRound(stop <-chan struct{}) error {
	leader := ms.node.Status().Leader
	members := ms.node.Members()
	var errs []error
	for _, pass := range []bool{true, false} {
		for _, p := range members {
			if p.ID == ms.id || (p.ID == leader) != pass {
				continue
			}
			info, err := parseMemberInfo(p.Context)
			if err != nil {
				continue
			}
			err = ms.copyHistoryFrom(info, stop)
			if _, to := ms.sm.HistoryGap(); to == 0 {
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
func (ms *membership) copyHistoryFrom(info memberInfo, stop <-chan struct{}) error {
	from, to := ms.sm.HistoryGap()
	ctx, cancel := context.WithTimeout(ms.peerContext(context.Background()), historyCopyTimeout)
	defer cancel()
	go func() { // the member closing ends the copy
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return peerrpc.CopyHistory(ctx, ms.peerDial, info.PeerAddr, from, to, maxHistoryRecvBytes, func(records [][]byte, oldest uint64) (bool, error) {
		_, left, err := ms.sm.FillHistory(records, oldest)
		return left == 0, err
	})
}
