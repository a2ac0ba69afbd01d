package member

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/metalog/metalog/metadata"
)

// ErrRateLimited is matched (errors.Is) by the error of an Execute refused
// because its identity is over Config.DDLRatePerIdentity. Nothing of such
// a request was checked or proposed; errors.As with *RateLimitError gives
// how long to wait.
var ErrRateLimited = errors.New("member: rate of schema changes per identity exceeded")

// RateLimitError is an Execute refused by the rate limit per identity.
type RateLimitError struct {
	// Identity is the principal whose bucket is in debt ("token:NAME",
	// "cert:CN", "anonymous").
	Identity string
	// Rate is ddl_rate_per_identity, in changes per second.
	Rate float64
	// Burst is ddl_burst_per_identity.
	Burst int
	// RetryAfter is how long until the identity's bucket is out of debt
	// again: a request sent then is admitted, unless the identity sent
	// others meanwhile.
	RetryAfter time.Duration
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("execute: %s is over its rate of schema changes (ddl_rate_per_identity %s per second, ddl_burst_per_identity %d); nothing was applied: retry after %v",
		e.Identity, strconv.FormatFloat(e.Rate, 'g', -1, 64), e.Burst, displayDelay(e.RetryAfter))
}

// Is makes errors.Is(err, ErrRateLimited) true.
func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }

// displayDelay rounds d up to a tenth of a second for people to read
// ("1.3s", "1m40s"); the RetryAfter field keeps the exact value.
func displayDelay(d time.Duration) time.Duration {
	const step = 100 * time.Millisecond
	return (d + step - 1) / step * step
}

// DefaultDDLBurst is the burst of a rate when ddl_burst_per_identity is
// not set: the rate rounded up, at least 1.
func DefaultDDLBurst(rate float64) int {
	if rate <= 0 {
		return 0
	}
	return int(max(1, math.Ceil(min(rate, math.MaxInt32))))
}

// sweepInterval is how often the limiter drops the buckets of identities
// idle long enough to be full again. A dropped bucket is exactly a new
// one, so the interval bounds memory, never what is admitted.
const sweepInterval = time.Minute

// rateLimiter is a token bucket per identity with the semantics of
// Kafka's controller mutation quota (KIP-599): a request is admitted while
// its identity's bucket holds at least one change, and is then charged
// all of its changes, which may put the bucket in debt; while in debt, the
// identity's requests are refused. So a request larger than the burst is
// admitted (once the bucket is full enough to hold one change) instead of
// being refused for ever, and pays for itself by the time it takes to
// refill.
//
// A bucket is kept as the time it will be full again (the generic cell
// rate algorithm's theoretical arrival time), in integer time, so that
// waiting exactly the retry-after it answered always admits: no float
// drift. Its level at now is burst - (full-now)/interval, where interval
// is the time one change takes to refill.
type rateLimiter struct {
	rate     float64       // changes per second
	burst    int           // changes a full bucket holds
	interval time.Duration // 1/rate: the time one change takes to refill
	now      func() time.Time
	limited  func(identity string) // counts a refusal; may be nil

	mu        sync.Mutex           // guards full and lastSweep
	full      map[string]time.Time // by identity: when its bucket is full again
	lastSweep time.Time
}

// newRateLimiter returns the limiter of rate changes per second with
// bursts of burst (at least 1), or nil when rate is 0 (off). now is the
// clock (time.Now when nil); limited, when not nil, is called with the
// identity of each refusal.
func newRateLimiter(rate float64, burst int, now func() time.Time, limited func(identity string)) *rateLimiter {
	if rate <= 0 {
		return nil
	}
	if now == nil {
		now = time.Now
	}
	return &rateLimiter{
		rate: rate, burst: max(burst, 1), interval: time.Duration(float64(time.Second) / rate),
		now: now, limited: limited, full: map[string]time.Time{}, lastSweep: now(),
	}
}

// take charges n changes to identity, or refuses them with a
// *RateLimitError while the identity's bucket is in debt. A refused
// request is not charged.
func (l *rateLimiter) take(identity string, n int) error {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) >= sweepInterval {
		l.sweepLocked(now)
	}
	full, ok := l.full[identity]
	if !ok || full.Before(now) {
		full = now
	}
	// Admitted while the bucket holds at least one change: it is full
	// again within (burst-1) intervals.
	if debt := full.Sub(now) - time.Duration(l.burst-1)*l.interval; debt > 0 {
		if l.limited != nil {
			l.limited(identity)
		}
		return &RateLimitError{Identity: identity, Rate: l.rate, Burst: l.burst, RetryAfter: debt}
	}
	l.full[identity] = full.Add(time.Duration(n) * l.interval)
	return nil
}

// sweepLocked drops the buckets that are full at now: taking from one
// later starts from a full bucket, as from the dropped one.
func (l *rateLimiter) sweepLocked(now time.Time) {
	for id, full := range l.full {
		if !full.After(now) {
			delete(l.full, id)
		}
	}
	l.lastSweep = now
}

// buckets is how many identities have a bucket (tests).
func (l *rateLimiter) buckets() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.full)
}

// limitRate charges a request of n statements to its principal's bucket
// (Config.DDLRatePerIdentity), before anything of it is checked or
// proposed. A retry of a request the cluster already answered (same
// request id) is not charged again: it gets its first answer, as it would
// without the limit.
func (w *Writes) limitRate(req Request, cmd metadata.Command, n int) error {
	if w.rate == nil {
		return nil
	}
	if cmd.RequestID != "" {
		if _, ok := w.sm.Current().Requests.Answer(cmd); ok {
			return nil
		}
	}
	return w.rate.take(req.Principal, n)
}
