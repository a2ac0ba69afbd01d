package member

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/metalog/metalog/access"
	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// Writes is a member's write service: schema changes (Execute, and
// DryRun, which checks one without proposing it), plans (Plan) and
// guardrail changes (SetGuardrails, SetKeyspaceGuardrails). A request is
// parsed once, checked on the member's state, proposed to the raft log
// and answered once it applied. Get it with Member.Writes; its methods are
// safe for concurrent use.
type Writes struct {
	node    proposer
	sm      *metadata.StateMachine
	cfg     *Config
	space   *spaceAlarm  // the NOSPACE alarm: no proposal while raised
	rate    *rateLimiter // nil: no rate limit per identity
	metrics *metrics
	logger  *slog.Logger
	// expected is the state machine's Config.Expected: the commands
	// prepared here that are on their way to apply.
	expected *metadata.Expected
}

// proposer is what the write path needs of the raft node, which
// *raftlog.Node implements: proposing a command and waiting for its
// result, a ReadIndex round (the pre-check's confirmation, DryRun's and
// Plan's linearizable reads), and the cluster id the command carries.
// Its methods are called from any goroutine.
type proposer interface {
	// Propose proposes data and returns what applying it returned (a
	// metadata.Outcome), or why it did not apply; an error matching
	// raftlog.ErrLeaderChanged says it may be in the log under a
	// leader that lost it, and can be proposed again.
	Propose(ctx context.Context, data []byte) (any, error)
	// ReadIndex returns once the member has applied everything the
	// leader had committed when it was called.
	ReadIndex(ctx context.Context) (uint64, error)
	// ClusterID is the cluster's id (0 for a cluster without one).
	ClusterID() uint64
}

var _ proposer = (*raftlog.Node)(nil)

// Request is one Execute: CQL statements and how to apply them.
type Request struct {
	// Statements is CQL text, one or more statements separated by ';'.
	Statements string
	// Keyspace is the default keyspace of unqualified table names.
	Keyspace string
	// RequestID names the request across retries: the cluster answers a
	// retry with the first result, and never applies it twice. Empty: the
	// member gives the request an id of its own.
	RequestID string
	// Atomic applies all the statements or none, as one change with one
	// epoch.
	Atomic bool
	// Principal is who asks, as the API authenticated them; the history
	// records it with the change.
	Principal string
	// IfEpoch, when HasIfEpoch is set, applies the request only if the
	// schema is still at that epoch when the log applies it (checked on
	// every member at the same point of the log): otherwise it fails with
	// FailedPrecondition and nothing of it applies.
	IfEpoch    uint64
	HasIfEpoch bool
	// Grants is what the caller holds, as the API authenticated them; nil
	// when authentication is off (no check). A request whose statements
	// touch a keyspace its ddl grants do not cover is refused whole
	// (ErrOutOfScope), and the history records the scoped grants a change
	// used (checkScope).
	Grants access.Grants
	// Visible, when set, is the caller's scope (as for Reads.Read): a
	// dry run's digest is then that of the keyspaces it reports true
	// for, the digest `describe` gives the caller, not the whole
	// cluster's. Nil: every keyspace.
	Visible func(keyspace string) bool
}

// Execute parses the statements once, checks them against this member's
// current state (so a request that cannot apply is refused before it
// reaches the log), proposes them as one command and waits for it to
// apply; DryRun does all of it but the proposal. The outcome holds the epoch and the result of every statement. A
// request refused before it was proposed (by the check, or for reusing the
// request id of another request, or by the rate limit per identity: a
// *RateLimitError) has an outcome without results and an error that
// counts no statement as applied: nothing of it was. A request proposed
// that had not applied when its deadline passed (no quorum, the leader
// lost) fails with an *OutcomeUnknownError (errors.Is ErrOutcomeUnknown):
// it may still apply; RequestOutcome tells later. Package api/apierr
// gives the error its gRPC code.
func (w *Writes) Execute(ctx context.Context, req Request) (metadata.Outcome, error) {
	cmd, parsed, err := w.command(req)
	if err != nil {
		return metadata.Outcome{}, err
	}
	if err := w.limitRate(req, cmd, len(parsed)); err != nil {
		return metadata.Outcome{}, err
	}
	if cmd.RequestID == "" {
		cmd.RequestID = serverRequestID()
	}
	data := cmd.Marshal(nil)
	prep, out, settled, err := w.precheck(ctx, cmd, parsed, data)
	if settled {
		return out, err
	}
	w.expected.Add(prep)
	defer w.expected.Remove(prep)
	return w.proposeData(ctx, cmd.RequestID, data)
}

// DryRun checks req as Execute does and answers what it would: the
// outcome (results, warnings, epochs) and the digest of the schema it
// would make, as of a linearizable read. Nothing is proposed, so nothing
// changes; a request Execute would refuse gets the same error (a request
// id the cluster remembers gets the first result, and the current
// digest). The request is checked against the whole schema, as Execute
// checks it, but the digest covers only req.Visible's keyspaces: a
// scoped caller learns nothing of the others from it.
func (w *Writes) DryRun(ctx context.Context, req Request) (metadata.Outcome, [32]byte, error) {
	cmd, parsed, err := w.command(req)
	if err != nil {
		return metadata.Outcome{}, [32]byte{}, err
	}
	if err := consistent(ctx, w.node, w.cfg.RequestTimeout, Linearizable); err != nil {
		return metadata.Outcome{}, [32]byte{}, err
	}
	cur := w.sm.Current()
	if res, ok := cur.Requests.Answer(cmd); ok {
		return res.Outcome, cur.Visible(req.Visible).Schema.Digest(), res.Err
	}
	next, out, err := cur.DryRun(cmd, parsed)
	if err != nil {
		return metadata.Outcome{}, [32]byte{}, err
	}
	return out, next.Visible(req.Visible).Schema.Digest(), nil
}

// command parses req's statements, applies the statement limit and the
// caller's scope, and builds the command to propose.
func (w *Writes) command(req Request) (metadata.Command, []cql.Parsed, error) {
	if strings.TrimSpace(req.Statements) == "" {
		return metadata.Command{}, nil, &ArgumentError{Field: "statements", Msg: "statements: no statement to execute"}
	}
	parsed, err := cql.Parse(req.Statements)
	if err != nil {
		return metadata.Command{}, nil, err
	}
	if n, limit := len(parsed), w.cfg.MaxStatementsPerRequest; n > limit {
		return metadata.Command{}, nil, &limitError{limit: ErrTooManyStatements, msg: fmt.Sprintf(
			"execute: %d statements in one request, more than the limit of %d (max_statements_per_request); nothing was applied: split the request", n, limit)}
	}
	role, err := checkScope(parsed, req.Keyspace, req.Principal, req.Grants)
	if err != nil {
		return metadata.Command{}, nil, err
	}
	rules := uint64(schema.RulesOriginal)
	for _, p := range parsed {
		rules = max(rules, schema.StatementRules(p.Statement))
	}
	return metadata.Command{
		RequestID:       req.RequestID,
		Keyspace:        req.Keyspace,
		Atomic:          req.Atomic,
		Text:            req.Statements,
		MaxMutationSize: w.cfg.MaxMutationSize,
		Principal:       req.Principal,
		Time:            time.Now().UnixNano(),
		IfEpoch:         req.IfEpoch,
		HasIfEpoch:      req.HasIfEpoch,
		Role:            role,
		Rules:           rules,
		Cluster:         idCluster(rules, w.node.ClusterID()),
	}, parsed, nil
}

// idCluster is the Command.Cluster of a command logged under rules by a
// member of cluster: the cluster id when the rules derive table ids from
// it (schema.RulesClusterTableIDs), 0 otherwise, so that a command that
// creates no table is logged as an earlier release logs it.
func idCluster(rules, cluster uint64) uint64 {
	if rules < schema.RulesClusterTableIDs {
		return 0
	}
	return cluster
}

// precheck checks cmd, whose statements are parsed, on this member's
// state, and prepares it there (metadata.ClusterMetadata.Prepare: the
// apply takes the result when the command applies on that state, rather
// than executing it again). settled says the request is answered here: a
// request whose id the state remembers gets the first result (or, when
// the id was another request's, is refused), and a request the state
// refuses is refused once a ReadIndex round confirmed the state was not
// just behind (a keyspace created a moment ago through another member).
// Only refused requests pay that round trip; a refusal has no results, as
// nothing of it applied.
func (w *Writes) precheck(ctx context.Context, cmd metadata.Command, parsed []cql.Parsed, data []byte) (prep *metadata.Prepared, out metadata.Outcome, settled bool, err error) {
	cur := w.sm.Current()
	if res, ok := cur.Requests.Answer(cmd); ok {
		return nil, res.Outcome, true, res.Err
	}
	if prep, err = cur.Prepare(cmd, parsed, data); err == nil {
		return prep, metadata.Outcome{}, false, nil
	}
	rctx, cancel := withTimeout(ctx, w.cfg.RequestTimeout)
	_, rerr := w.node.ReadIndex(rctx)
	cancel()
	if rerr != nil {
		return nil, metadata.Outcome{}, true, err
	}
	cur = w.sm.Current()
	if res, ok := cur.Requests.Answer(cmd); ok {
		return nil, res.Outcome, true, res.Err
	}
	if prep, err = cur.Prepare(cmd, parsed, data); err != nil {
		return nil, metadata.Outcome{}, true, err
	}
	return prep, metadata.Outcome{}, false, nil
}

// withTimeout applies the member's default deadline (Config.RequestTimeout)
// to requests without one. A client's own deadline is shortened a little,
// so that the member answers (Unavailable when nothing was proposed, the
// outcome unknown when it may still apply, with the request id) before the
// client gives up and sees only its own DeadlineExceeded.
func withTimeout(ctx context.Context, def time.Duration) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	if !ok {
		return context.WithTimeout(ctx, def)
	}
	left := time.Until(d)
	return context.WithDeadline(ctx, d.Add(-min(200*time.Millisecond, left/10)))
}

// serverRequestIDPrefix starts the request id the member gives a command
// that came without one.
const serverRequestIDPrefix = "server-"

// serverRequestID returns serverRequestIDPrefix and 16 random bytes in
// hex, in one allocation.
func serverRequestID() string {
	var r [16]byte
	rand.Read(r[:])
	var b [len(serverRequestIDPrefix) + 2*len(r)]byte
	copy(b[:], serverRequestIDPrefix)
	hex.Encode(b[len(serverRequestIDPrefix):], r[:])
	return string(b[:])
}

// propose commits cmd and returns its outcome. It gives a command without
// a request id one, so that a proposal lost in a leader change can be
// proposed again without applying twice. While the NOSPACE alarm is
// raised it refuses cmd (ErrNoSpace), as the raft log's append gate would.
//
// An error that matches ErrOutcomeUnknown (an *OutcomeUnknownError) says
// the command may still apply: an attempt may be in the log (raft took
// it, then the leader changed or the deadline passed) and no later one
// applied. Any other error without an outcome says nothing was proposed.
func (w *Writes) propose(ctx context.Context, cmd metadata.Command) (metadata.Outcome, error) {
	if cmd.RequestID == "" {
		cmd.RequestID = serverRequestID()
	}
	return w.proposeData(ctx, cmd.RequestID, cmd.Marshal(nil))
}

// proposeData is propose for the command data, marshaled with its request
// id.
func (w *Writes) proposeData(ctx context.Context, requestID string, data []byte) (metadata.Outcome, error) {
	if err := w.space.err(); err != nil {
		return metadata.Outcome{}, err
	}
	ctx, cancel := withTimeout(ctx, w.cfg.RequestTimeout)
	defer cancel()
	if size := int64(len(data)); size > w.cfg.MaxMutationSize {
		// The peers bound the messages they take by it: an entry past
		// it would never reach them.
		return metadata.Outcome{}, &limitError{limit: ErrEntryTooLarge, msg: fmt.Sprintf(
			"execute: the change is %d bytes as a log entry, more than max_mutation_size (%d bytes); nothing was applied: split the request", size, w.cfg.MaxMutationSize)}
	}
	w.metrics.proposalsPending.Inc()
	defer w.metrics.proposalsPending.Dec()
	// If the command ever applies, it applies after what this member has
	// applied now.
	after := w.sm.Current().Index
	entered := false // an attempt may be in the log
	for {
		v, err := w.node.Propose(ctx, data)
		if errors.Is(err, raftlog.ErrLeaderChanged) {
			entered = true
			w.logger.Info("leader changed during a proposal; proposing again", "request_id", clip.String(requestID))
			continue
		}
		if out, ok := v.(metadata.Outcome); ok {
			// Applied, fully or (err says which statement failed) partly:
			// the outcome holds what did.
			return out, err
		}
		if err != nil {
			w.metrics.proposalsFailed.Inc()
			return metadata.Outcome{}, proposeError(requestID, after, entered, err)
		}
		return metadata.Outcome{}, fmt.Errorf("member: unexpected apply result %T", v)
	}
}
