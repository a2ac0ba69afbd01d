package member

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/metalog/metalog/metadata"
)

// pacer wakes a member's change feeds together, at beats: a beat is
// struck when the state machine publishes a new epoch, and every feed
// waiting for one sends the epochs up to the beat's and waits for the
// next. Feeds that keep up therefore ask for the same epochs and, with
// the same filter, share one message (fanout).
//
// With a window, beats are at least the window apart: a change after a
// quiet spell is struck at once, and the changes applied within the
// window after a beat wait for its end and go out together. During a
// burst of DDL each feed then gets one message per window, with every
// epoch applied since its last, so that a fleet of feeds costs the
// member a message per feed per window rather than per epoch, for at
// most a window's delay.
//
// Without feeds the pacer strikes nothing: it waits for the first feed
// rather than waking on every publish, which would cost every DDL a
// goroutine wake-up on every member for nobody. The first feed to join
// strikes a beat of the state published then.
type pacer struct {
	sm     *metadata.StateMachine
	window time.Duration
	cur    atomic.Pointer[beat]
	// strikeMu orders the beats struck by the pacer and by a joining
	// feed (strike).
	strikeMu sync.Mutex
	// feeds counts the feeds running (join); joined gets a value when
	// the first joins, so that an idle pacer starts striking.
	feeds  atomic.Int64
	joined chan struct{}
	// after is time.After; tests end a window when they choose.
	after func(time.Duration) <-chan time.Time
}

// beat is the state the feeds send up to, and the channel closed when
// the next beat is struck.
type beat struct {
	md   *metadata.ClusterMetadata
	next chan struct{}
}

// newPacer returns a pacer of sm's feeds whose first beat is sm's
// current state; after, if not nil, replaces time.After.
func newPacer(sm *metadata.StateMachine, window time.Duration, after func(time.Duration) <-chan time.Time) *pacer {
	if after == nil {
		after = time.After
	}
	p := &pacer{sm: sm, window: window, after: after, joined: make(chan struct{}, 1)}
	p.cur.Store(&beat{md: sm.Current(), next: make(chan struct{})})
	return p
}

// current is the last beat struck.
func (p *pacer) current() *beat { return p.cur.Load() }

// join counts a feed in until the returned leave is called; the pacer
// strikes beats only while some feed is in.
func (p *pacer) join() (leave func()) {
	if p.feeds.Add(1) == 1 {
		// Nothing was struck while no feed ran: bring the beat up to
		// now, so that the feed does not start from an old state.
		p.strike()
		select {
		case p.joined <- struct{}{}:
		default: // the pacer has one to take already
		}
	}
	return func() { p.feeds.Add(-1) }
}

// run strikes beats until stop is closed.
func (p *pacer) run(stop <-chan struct{}) {
	var last time.Time
	for {
		if p.feeds.Load() == 0 {
			select {
			case <-p.joined:
				continue
			case <-stop:
				return
			}
		}
		changed := p.sm.Changed() // before Current: no publish is missed
		if p.sm.Current().Epoch == p.current().md.Epoch {
			select {
			case <-changed:
				continue
			case <-stop:
				return
			}
		}
		if wait := time.Until(last.Add(p.window)); wait > 0 {
			select {
			case <-p.after(wait):
			case <-stop:
				return
			}
		}
		last = time.Now()
		p.strike()
	}
}

// strike makes the state published now the beat, and wakes the feeds
// waiting for one, unless the last beat is of the same epoch. The state
// is read under strikeMu, so beats follow the published states in order
// when a joining feed and the pacer strike at once.
func (p *pacer) strike() {
	p.strikeMu.Lock()
	defer p.strikeMu.Unlock()
	md := p.sm.Current()
	if md.Epoch == p.current().md.Epoch {
		return
	}
	old := p.cur.Swap(&beat{md: md, next: make(chan struct{})})
	close(old.next)
}
