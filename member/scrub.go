package member

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/metalog/metalog/internal/boltcheck"
	"github.com/metalog/metalog/metadata"
)

// storeScrub is the member's background scrub of its schema store
// (store_scrub_interval): every interval it re-reads the store at a
// bounded pace (metadata.Scrubber) and, on a damage, logs an ERROR
// (metalog_store_corruptions_total counts it), reports the member
// degraded on /readyz, and rewrites the store from the applied metadata
// (Scrubber.Repair) unless that is not safe now: the member's apply
// failed (its metadata is not to be trusted), or its NOSPACE alarm is
// raised (the fresh file needs room). A repair is checked by a scrub
// right after it; the degraded reason clears with the first clean scrub,
// so after a repair that holds it clears within a scrub's time. A repair
// not done is tried again at the next interval.
type storeScrub struct {
	scrubber *metadata.Scrubber
	interval time.Duration
	logger   *slog.Logger
	// unsafe says why a repair is not safe now, "" when it is.
	unsafe func() string

	mu     sync.Mutex // guards reason
	reason string     // why the member is degraded, "" when the last scrub was clean
}

// repairTries and repairRetry bound the waits for a state machine that is
// applying (metadata.ErrRepairBusy) before a repair gives up until the
// next interval.
const (
	repairTries = 20
	repairRetry = 50 * time.Millisecond
)

// startStoreScrub starts m's scrub loop when Config.StoreScrubInterval is
// set.
func startStoreScrub(m *Member) {
	c := m.core
	if c.cfg.StoreScrubInterval <= 0 {
		return
	}
	m.scrub = &storeScrub{
		scrubber: metadata.NewScrubber(c.sm, metadata.ScrubConfig{BytesPerSecond: c.cfg.storeScrubBytesPerSecond}),
		interval: c.cfg.StoreScrubInterval,
		logger:   c.logger,
		unsafe: func() string {
			if err := c.applier.failed(); err != nil {
				return fmt.Sprintf("the member's apply failed (%v)", err)
			}
			if raised, cause, _ := c.space.state(); raised {
				return "the NOSPACE alarm is raised (" + cause + ")"
			}
			return ""
		},
	}
	m.wg.Go(func() { m.scrub.run(m.stopc) })
}

// degraded is why the scrub degrades the member, "" when it does not; a
// nil storeScrub (scrubs off) never does.
func (s *storeScrub) degraded() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}

func (s *storeScrub) setReason(r string) {
	s.mu.Lock()
	s.reason = r
	s.mu.Unlock()
}

// run scrubs every interval until stop is closed, which also ends a scrub
// under way.
func (s *storeScrub) run(stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-stop:
		case <-ctx.Done():
		}
		cancel()
	})
	defer wg.Wait()
	defer cancel()
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		s.round(ctx)
	}
}

// round is one scrub, and the repair and second scrub a damage calls for.
func (s *storeScrub) round(ctx context.Context) {
	res, err := s.scrubOnce(ctx)
	if err != nil || res.Damage == nil {
		return
	}
	if why := s.unsafe(); why != "" {
		s.setReason(fmt.Sprintf("schema store damaged: %v; not repaired: %s", res.Damage, why))
		s.logger.Error("schema store not repaired: the repair is not safe now; it is tried again at the next scrub", "reason", why)
		return
	}
	aside, err := s.repair(ctx, res.Damage)
	if err != nil {
		s.setReason(fmt.Sprintf("schema store damaged: %v; repair failed: %v", res.Damage, err))
		s.logger.Error("schema store repair failed; it is tried again at the next scrub", "err", err)
		return
	}
	s.setReason(fmt.Sprintf("schema store damaged: %v; rewritten from the applied metadata (damaged file kept at %s), checking it again", res.Damage, aside))
	s.scrubOnce(ctx)
}

// scrubOnce scrubs the store, logs and records what it found.
func (s *storeScrub) scrubOnce(ctx context.Context) (metadata.ScrubResult, error) {
	res, err := s.scrubber.Scrub(ctx)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			s.logger.Warn("schema store scrub did not finish", "err", err)
		}
	case res.Damage != nil:
		s.setReason(fmt.Sprintf("schema store damaged: %v", res.Damage))
		args := []any{"index", res.Index, "epoch", res.Epoch, "err", res.Damage}
		var d *boltcheck.Error
		if errors.As(res.Damage, &d) {
			args = append(args, "file", d.File, "kind", d.Kind, "where", d.Where, "detail", d.Detail)
		}
		s.logger.Error("schema store scrub found damage; the raft log and the applied metadata are intact, the store is rewritten from them when safe", args...)
	default:
		s.setReason("")
		s.logger.Debug("schema store scrub clean", "index", res.Index, "epoch", res.Epoch, "values", res.Values, "bytes", res.Bytes,
			"compared_with_memory", res.Compared, "took", res.Duration)
	}
	return res, err
}

// repair rewrites the store, waiting out a state machine in the middle of
// applying a batch.
func (s *storeScrub) repair(ctx context.Context, damage error) (string, error) {
	kind := metadata.DamageRead
	var d *boltcheck.Error
	if errors.As(damage, &d) {
		kind = d.Kind
	}
	for try := 1; ; try++ {
		aside, err := s.scrubber.Repair(kind)
		if !errors.Is(err, metadata.ErrRepairBusy) || try == repairTries {
			return aside, err
		}
		select {
		case <-time.After(repairRetry):
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}
