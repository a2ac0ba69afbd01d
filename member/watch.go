package member

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// The types of WatchMessage.
const (
	// WatchEvents carries the changes of one or more consecutive epochs.
	WatchEvents = "events"
	// WatchProgress says the member is at Epoch and nothing (more) matched
	// up to it.
	WatchProgress = "progress"
	// WatchResync replaces the changes after the requested epoch, which
	// were pruned, with the (filtered) schema at Epoch as DESCRIBE CQL.
	WatchResync = "resync"
)

// WatchQuery says where a change feed starts and what it follows.
type WatchQuery struct {
	// From, if set, starts the feed after that epoch; nil: from now.
	From *uint64
	// Keyspace and Table filter the events (metadata.Event.Matches).
	Keyspace, Table string
	// Visible, when set, is the reader's scope: only the events about the
	// keyspaces it reports true for, and cluster-level ones, are sent
	// (metadata.EventFilter.Visible), and a resync describes only those
	// keyspaces. The feed's epochs advance past the others' changes as
	// past any epoch the filter leaves out.
	Visible func(keyspace string) bool
	// Scope, when Visible is set, names it: feeds whose Visible has the
	// same Scope (the same grants) share their messages; without one a
	// feed with Visible reads its own.
	Scope string
	// HistoryID, when not 0, is the history From counts in: a member of
	// another history refuses the feed (*HistoryChangedError).
	HistoryID uint64
}

// filter is what q keeps of each record.
func (q WatchQuery) filter() metadata.EventFilter {
	return metadata.EventFilter{Keyspace: q.Keyspace, Table: q.Table, Visible: q.Visible}
}

// WatchMessage is one message of a change feed.
type WatchMessage struct {
	// Type is WatchEvents, WatchProgress or WatchResync.
	Type string
	// Epoch is where the feed is once the message is read: the last epoch
	// the events cover (a later one than the last event's when the epochs
	// after it did not match), the epoch of the progress, or of the
	// resync.
	Epoch uint64
	// Records hold the matching events of a WatchEvents message: those of
	// one epoch, or of several consecutive epochs when more than one was
	// waiting (a feed that is behind, or a member applying faster than
	// its feeds send, catches up in fewer messages).
	Records []*metadata.Record
	// CQL is the DESCRIBE text of a WatchResync message.
	CQL string
	// Schema is the schema a WatchResync message replaces the changes
	// with, limited to the keyspaces the reader may see (Visible); the
	// feed's Keyspace and Table filters are the caller's to apply, as CQL
	// has them applied.
	Schema schema.Schema
	// Shared is the same for every feed sent this message (same filter,
	// same epochs): a sender keeps the message's encoding there, so that
	// it is encoded once for all of them. Nil for a message of one feed.
	Shared *SharedEncoding
}

// Watch runs a change feed until ctx ends, the member stops
// (Unavailable), or send fails, handing every message to send on the
// caller's goroutine: the events of each epoch after q.From, in order,
// once each, read from the history this member applied, so that a slow
// consumer only slows its own feed. A feed behind the history kept gets
// one WatchResync and goes on from there; one that reaches epochs this
// member is still copying from a peer ends Unavailable (another member has
// them). A silent feed gets a WatchProgress every
// Config.WatchProgressInterval. Without q.From the first message is a
// WatchProgress at the current epoch.
//
// A q.From ahead of the member's epoch is waited for, until ctx ends
// (DeadlineExceeded, naming both epochs, when its deadline passes): the
// epochs after it are sent as the member applies them, and until then
// the progress messages carry the member's own epoch, below q.From. A
// feed never claims an epoch its member has not reached. A q.HistoryID
// other than the member's is refused at once (*HistoryChangedError).
func (r *Reads) Watch(ctx context.Context, q WatchQuery, send func(WatchMessage) error) error {
	if err := checkFilter(q.Keyspace, q.Table); err != nil {
		return err
	}
	if err := checkHistory("watch", q.HistoryID, r.names.identity()); err != nil {
		return err
	}
	select {
	case <-r.ending:
		return errShuttingDown
	default:
	}
	r.counters.watchers.Inc()
	defer r.counters.watchers.Dec()
	w := &watch{r: r, q: q, send: send, progress: r.progress, maxLag: r.maxLag}
	if q.From == nil {
		w.cursor = r.machine.Current().Epoch
		if err := w.emit(WatchMessage{Type: WatchProgress, Epoch: w.cursor}); err != nil {
			return err
		}
	} else {
		w.cursor = *q.From
	}
	return w.run(ctx)
}

// watchBatch is the most epochs one message of a feed covers.
const watchBatch = 64

// watch is one running change feed.
type watch struct {
	r        *Reads
	q        WatchQuery
	send     func(WatchMessage) error
	progress time.Duration
	maxLag   uint64    // Config.WatchMaxLag; 0: none
	cursor   uint64    // the last epoch the feed has covered
	sent     time.Time // when the last message went out
	// live is set once the feed has covered the member's epoch: from
	// then on it is cut when it falls more than maxLag behind.
	live bool
}

func (w *watch) emit(msg WatchMessage) error {
	w.sent = time.Now()
	return w.send(msg)
}

func (w *watch) run(ctx context.Context) error {
	defer w.r.pace.join()()
	timer := time.NewTimer(w.progress)
	defer timer.Stop()
	for {
		b := w.r.pace.current()
		if err := w.catchUp(ctx, b.md); err != nil {
			return err
		}
		w.live = true
		timer.Reset(time.Until(w.sent.Add(w.progress)))
		select {
		case <-b.next:
		case <-timer.C:
			// Never past the member's own epoch: a feed asked from an
			// epoch ahead of it says where the member is.
			if err := w.emit(WatchMessage{Type: WatchProgress, Epoch: min(w.cursor, w.r.machine.Current().Epoch)}); err != nil {
				return err
			}
		case <-ctx.Done():
			return w.ended(ctx)
		case <-w.r.stop:
			return errShuttingDown
		case <-w.r.ending:
			return errShuttingDown
		}
	}
}

// ended is the error of a feed whose ctx ended: ctx.Err(), with both
// epochs said when the feed was still waiting for the member to reach the
// epoch it was asked from.
func (w *watch) ended(ctx context.Context) error {
	err := ctx.Err()
	cur := w.r.machine.Current().Epoch
	if w.cursor <= cur || !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("watch from_epoch %d: this member (history %s) was still at epoch %d when the request deadline passed: "+
		"the cluster has not made that epoch yet, or this member is behind: %w",
		w.cursor, FormatHistoryID(w.r.names.identity().HistoryID), cur, err)
}

// errShuttingDown ends the feeds of a member that closes or drains
// (EndFeeds): unavailable, which client.Watch resumes on another member.
var errShuttingDown = &UnavailableError{Msg: "watch: this member is shutting down; resume on another member"}

// catchUp sends the matching events of the epochs up to cur's.
func (w *watch) catchUp(ctx context.Context, cur *metadata.ClusterMetadata) error {
	for w.cursor < cur.Epoch {
		if err := ctx.Err(); err != nil {
			return err
		}
		select {
		case <-w.r.ending: // a feed far behind does not hold a drain
			return errShuttingDown
		default:
		}
		if err := w.checkLag(); err != nil {
			return err
		}
		b, err := w.r.fan.batch(w.r.machine, &w.q, w.cursor, cur.Epoch)
		if errors.Is(err, metadata.ErrHistoryPruned) {
			if err := w.resync(cur); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return historyError(err)
		}
		w.cursor = b.last
		if len(b.msg.Records) == 0 {
			continue
		}
		w.r.counters.watchLag.Observe(float64(cur.Epoch - b.msg.Records[0].Epoch))
		w.r.counters.watchEvents.Add(float64(b.events))
		if err := w.emit(b.msg); err != nil {
			return err
		}
	}
	return nil
}

// checkLag cuts a live feed that is more than maxLag epochs behind the
// member (WatchLaggingError).
func (w *watch) checkLag() error {
	if !w.live || w.maxLag == 0 {
		return nil
	}
	if now := w.r.machine.Current().Epoch; now > w.cursor+w.maxLag {
		w.r.counters.watchCuts.Inc()
		return &WatchLaggingError{Resume: w.cursor, Epoch: now, MaxLag: w.maxLag}
	}
	return nil
}

// resync replaces the pruned epochs up to cur's by cur's schema.
func (w *watch) resync(cur *metadata.ClusterMetadata) error {
	w.r.counters.watchResyncs.Inc()
	w.cursor = cur.Epoch
	visible := cur.Schema.Filter(w.q.Visible)
	return w.emit(WatchMessage{Type: WatchResync, Epoch: cur.Epoch, CQL: filteredCQL(visible, w.q.Keyspace, w.q.Table), Schema: visible})
}

// filteredCQL is the DESCRIBE text of s, of keyspace ks, or of its table
// with the table's indexes, triggers and views (DESCRIBE TABLE).
func filteredCQL(s schema.Schema, ks, table string) string {
	if ks == "" {
		return describe.Schema(s)
	}
	k, ok := s.Keyspace(ks)
	if !ok {
		return ""
	}
	if table == "" {
		return describe.Keyspace(k)
	}
	t, ok := k.Table(table)
	if !ok {
		return ""
	}
	return describe.TableElements(k, t)
}
