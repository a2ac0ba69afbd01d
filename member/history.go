package member

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/schema"
)

// Reads is a member's read service: the metadata a read answers from
// (Read, ReadAt), the history its state machine keeps (History), change
// feeds (Watch), the remembered outcomes of requests (RequestOutcome) and
// backups (Backup). Get it with Member.Reads; its methods are safe for
// concurrent use.
type Reads struct {
	machine *metadata.StateMachine
	// node confirms a linearizable read with the leader (ReadIndex).
	node readIndexer
	// timeout is Config.RequestTimeout, the bound of a request without
	// a deadline of its own.
	timeout  time.Duration
	counters *metrics
	// progress is Config.WatchProgressInterval, maxLag
	// Config.WatchMaxLag (0: none).
	progress time.Duration
	maxLag   uint64
	// pace wakes the feeds together (pacer.go), and fan shares their
	// batches (fanout.go).
	pace *pacer
	fan  fanout
	// stop is closed when the member closes: feeds end.
	stop <-chan struct{}
	// ending is closed by EndFeeds: feeds end before the member closes.
	ending  chan struct{}
	endOnce sync.Once
	// names gives the member's cluster and history as of the applied
	// state, and names the history when it has to.
	names *historyNamer
}

// EndFeeds ends every change feed (Watch) at once, and any started later,
// with Unavailable "this member is shutting down": the first step of a
// drain, which cannot wait for feeds since they never end by themselves.
// The client resumes on another member from the last epoch it received
// (client.Watch). It is safe to call more than once.
func (r *Reads) EndFeeds() {
	r.endOnce.Do(func() { close(r.ending) })
}

// History page sizes, in events.
const (
	// DefaultHistoryLimit is the page size of a HistoryQuery without one.
	DefaultHistoryLimit = 1000
	// MaxHistoryLimit is the largest page a HistoryQuery may ask for.
	MaxHistoryLimit = 10000
)

// HistoryQuery asks for a page of the history: the changes of the epochs
// in (From, To] matching the filter.
type HistoryQuery struct {
	// From, if set, starts the page after that epoch (0: the first one
	// kept... or refused with OutOfRange when older ones were pruned). Nil:
	// the page is the newest Limit events up to To.
	From *uint64
	// To, if set, ends the range at that epoch; nil: now.
	To *uint64
	// Keyspace and Table filter the events (metadata.Event.Matches).
	Keyspace, Table string
	// Visible, when set, is the reader's scope: only the events about the
	// keyspaces it reports true for, and cluster-level ones, are read
	// (metadata.EventFilter.Visible). Pages still hold Limit events when
	// that many follow: the invisible ones do not count.
	Visible func(keyspace string) bool
	// Limit is the most events in the page (0: DefaultHistoryLimit); a
	// page never splits an epoch, so an atomic request may exceed it.
	Limit int
	// HistoryID, when not 0, is the history the caller's epochs count in:
	// a member of another history refuses the read
	// (*HistoryChangedError).
	HistoryID uint64
	// Principal, Since, Until and Kind filter the changes by who made
	// them, when (Since included, Until excluded, by the proposer's clock;
	// changes of unknown time are left out when either is set) and the
	// statement kind (any case, e.g. "create table"; KindSetGuardrails
	// for guardrail changes): metadata.EventFilter. Like the keyspace
	// filter, they leave the paging by epoch as it is: the events they
	// leave out do not count toward Limit, and Next still follows the last
	// epoch read.
	Principal    string
	Since, Until time.Time
	Kind         string
}

// KindSetGuardrails is the statement kind of guardrail changes in the
// history (metadata.KindSetGuardrailsEvent), which HistoryQuery.Kind
// takes beside the CQL statement kinds.
const KindSetGuardrails = metadata.KindSetGuardrailsEvent

// check refuses a query whose filters cannot match anything by mistake:
// a table without a keyspace, a kind that is no statement's, or a time
// range that ends before it starts. It normalises Kind.
func (q *HistoryQuery) check() error {
	if err := checkFilter(q.Keyspace, q.Table); err != nil {
		return err
	}
	if q.Kind != "" {
		kinds := append(schema.StatementKinds(), KindSetGuardrails)
		q.Kind = metadata.NormalizeKind(q.Kind)
		if !slices.Contains(kinds, q.Kind) {
			return argumentError("kind", "kind %s: no statement has this kind; want one of %s", clip.Quote(q.Kind), strings.Join(kinds, ", "))
		}
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Until.After(q.Since) {
		return argumentError("until", "until %s is not after since %s: the range [since, until) holds no time; give an until after since",
			q.Until.UTC().Format(time.RFC3339Nano), q.Since.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// HistoryPage is one page of history.
type HistoryPage struct {
	// Records hold the matching events, oldest first.
	Records []*metadata.Record
	// Next, when set, is the From of the next page.
	Next *uint64
	// Epoch is the member's epoch when it answered.
	Epoch uint64
	// Oldest is the oldest epoch whose changes the member keeps.
	Oldest uint64
}

// History returns a page of the history this member applied. A range
// reaching past the oldest epoch kept is OutOfRange (a
// *metadata.PrunedError), naming it; one this member has not copied from
// a peer yet (it was rebuilt from a snapshot) is Unavailable, so a client
// asks another member; one that names another history id than the
// member's is refused (*HistoryChangedError).
func (r *Reads) History(ctx context.Context, q HistoryQuery) (HistoryPage, error) {
	if err := q.check(); err != nil {
		return HistoryPage{}, err
	}
	if err := checkHistory("history", q.HistoryID, r.names.identity()); err != nil {
		return HistoryPage{}, err
	}
	switch {
	case q.Limit < 0 || q.Limit > MaxHistoryLimit:
		return HistoryPage{}, argumentError("limit", "limit %d: want 1 to %d (0: %d)", q.Limit, MaxHistoryLimit, DefaultHistoryLimit)
	case q.Limit == 0:
		q.Limit = DefaultHistoryLimit
	}
	cur := r.machine.Current()
	page := HistoryPage{Epoch: cur.Epoch, Oldest: r.machine.OldestEpoch()}
	to := cur.Epoch
	if q.To != nil {
		if q.From != nil && *q.To < *q.From {
			return HistoryPage{}, argumentError("to_epoch", "to_epoch %d is before from_epoch %d", *q.To, *q.From)
		}
		to = min(to, *q.To)
	}
	var err error
	if q.From == nil {
		page.Records, err = r.machine.HistoryTail(to, q.Limit, q.filter())
	} else {
		page.Records, page.Next, err = r.historyFrom(*q.From, to, q)
	}
	if err != nil {
		return HistoryPage{}, historyError(err)
	}
	return page, nil
}

// filter is what q keeps of each record.
func (q HistoryQuery) filter() metadata.EventFilter {
	return metadata.EventFilter{Keyspace: q.Keyspace, Table: q.Table, Visible: q.Visible,
		Principal: q.Principal, Since: q.Since, Until: q.Until, Kind: q.Kind}
}

// historyBatch is how many records a history or watch read takes from the
// state machine at a time.
const historyBatch = 256

// historyFrom reads the matching records of (from, to] until the page
// holds q.Limit events, and the From of the next page if one follows.
func (r *Reads) historyFrom(from, to uint64, q HistoryQuery) ([]*metadata.Record, *uint64, error) {
	var out []*metadata.Record
	events := 0
	for from < to {
		recs, err := r.machine.History(from, to, historyBatch)
		if err != nil {
			return nil, nil, err
		}
		for _, r := range recs {
			if events >= q.Limit {
				next := from
				return out, &next, nil
			}
			from = r.Epoch
			if f, ok := r.Filter(q.filter()); ok {
				out = append(out, f)
				events += len(f.Events)
			}
		}
		if len(recs) == 0 {
			break
		}
	}
	return out, nil, nil
}

// checkFilter refuses a table filter without a keyspace.
func checkFilter(ks, table string) error {
	if table != "" && ks == "" {
		return argumentError("table", "table %q: a table filter needs a keyspace", table)
	}
	return nil
}

// historyError gives the errors of history reads this member's wording:
// history it has not copied from a peer yet is an *UnavailableError (a
// client asks another member). A *metadata.PrunedError keeps its type:
// the API answers it OutOfRange, with the oldest epoch kept in the
// answer's details (HISTORY_PRUNED).
func historyError(err error) error {
	var ie *metadata.IncompleteError
	if errors.As(err, &ie) {
		return &UnavailableError{Msg: ie.Error(), Err: ie}
	}
	return err
}

// ReadAt returns the metadata to answer a read of the schema as it was at
// epoch: this member's state, with its Schema and Epoch as they were then;
// the other fields are the current ones. It costs O(changes since epoch).
// visible filters the schema answered as for Read.
//
// An epoch past this member's is confirmed with the leader first (a
// ReadIndex round, whatever consistency says): once this member has
// applied everything committed, it has the epoch if the cluster made it;
// otherwise the read is refused at once (*EpochAheadError, OutOfRange),
// rather than waiting for an epoch that may never come.
func (r *Reads) ReadAt(ctx context.Context, epoch uint64, consistency string, visible func(keyspace string) bool) (*metadata.ClusterMetadata, error) {
	if err := r.consistent(ctx, consistency); err != nil {
		return nil, err
	}
	if local := r.machine.Current().Epoch; epoch > local && consistency != Linearizable {
		if err := r.consistent(ctx, Linearizable); err != nil {
			return nil, &OpError{Op: fmt.Sprintf("at_epoch %d: this member is at epoch %d and could not learn from the leader whether the cluster has made epoch %d",
				epoch, local, epoch), Err: err}
		}
	}
	cur := r.machine.Current()
	if epoch > cur.Epoch {
		return nil, &EpochAheadError{At: epoch, Epoch: cur.Epoch, HistoryID: r.names.identity().HistoryID}
	}
	if epoch == cur.Epoch {
		return cur.Visible(visible), nil
	}
	s, err := r.machine.SchemaAt(cur, epoch)
	if err != nil {
		if err = historyError(err); errors.Is(err, metadata.ErrHistoryPruned) {
			return nil, fmt.Errorf("at_epoch %d: %w", epoch, err)
		}
		return nil, &OpError{Op: fmt.Sprintf("at_epoch %d", epoch), Err: err}
	}
	at := *cur
	at.Epoch, at.Schema = epoch, s
	return at.Visible(visible), nil
}
