package metadata

import (
	"errors"
	"fmt"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// ClusterMetadata is one immutable version of the cluster's metadata. A
// value published by the StateMachine is never modified; readers may keep it
// as long as they like.
type ClusterMetadata struct {
	// Epoch counts the schema changes applied so far; every DDL that changes
	// something adds one.
	Epoch uint64
	// Index is the raft log index of the last command applied.
	Index uint64
	// Schema is the keyspaces and tables at Epoch.
	Schema schema.Schema
	// Requests remembers recent request ids and their results.
	Requests Requests
	// Guardrails are the cluster's guardrail settings at Epoch.
	Guardrails guardrails.Settings
	// GuardrailsSet is true once the guardrails were set through the log
	// (before that they are the defaults, and a member's config file may
	// set them once).
	GuardrailsSet bool
	// KeyspaceGuardrails are the per-keyspace guardrail overrides at Epoch
	// (see guardrails.Overrides); none until set through the log.
	KeyspaceGuardrails guardrails.Overrides
	// History is the name of the history the epochs count in, as the
	// last KindNameHistory command that changed it set it; the zero value
	// until one applied. It names the history of History.Cluster only.
	History HistoryName
}

// StatementResult is what one statement of a command did.
type StatementResult struct {
	// Text is the statement's source text.
	Text string
	// Result says what the statement changed.
	Result schema.Result
	// Epoch is the epoch after the statement.
	Epoch uint64
}

// Outcome is the result of a command that applied.
type Outcome struct {
	// Epoch after the command.
	Epoch uint64
	// Results has one entry per statement, in order.
	Results []StatementResult
	// Warnings are the guardrail warnings the command raised.
	Warnings []guardrails.Warning
}

// StatementError reports which statement of a command failed. Unwrap gives
// the schema or syntax error, so errors.Is(err, schema.ErrAlreadyExists)
// and errors.As(err, **cql.SyntaxError) work through it.
type StatementError struct {
	// Position is the 1-based number of the failed statement.
	Position int
	// Total is the number of statements in the command.
	Total int
	// Applied is how many statements before it took effect (non-atomic
	// commands only; atomic commands apply nothing on failure).
	Applied int
	// Err is the cause.
	Err error
}

func (e *StatementError) Error() string {
	if e.Total <= 1 {
		return e.Err.Error()
	}
	msg := fmt.Sprintf("statement %d of %d: %v", e.Position, e.Total, e.Err)
	if e.Applied > 0 {
		msg += fmt.Sprintf(" (the %d statement(s) before it were applied)", e.Applied)
	}
	return msg
}

func (e *StatementError) Unwrap() error { return e.Err }

// ErrEpochMoved is matched (errors.Is) by the error of a command whose
// IfEpoch is not the epoch the metadata was at when it applied.
var ErrEpochMoved = errors.New("metadata: the schema moved past if_epoch")

// EpochMovedError is a command refused because the metadata was not at its
// IfEpoch: nothing of it applied.
type EpochMovedError struct {
	Want, Have uint64
}

func (e *EpochMovedError) Error() string {
	return fmt.Sprintf("if_epoch %d: the schema is at epoch %d, so it changed since (plan again); nothing of this request was applied", e.Want, e.Have)
}

func (e *EpochMovedError) Is(target error) bool { return target == ErrEpochMoved }

// DryRun executes cmd, whose statements are parsed, on m as the log would
// apply it next, and returns the metadata it would make and the outcome
// (results, warnings and epochs), changing nothing. A request it refuses
// is refused as Precheck refuses it, with nothing counted as applied.
func (m *ClusterMetadata) DryRun(cmd Command, stmts []cql.Parsed) (*ClusterMetadata, Outcome, error) {
	next, _, out, err := m.dryRun(cmd, stmts, modeDryRun)
	return next, out, err
}

// dryRun is DryRun in mode modeDryRun, Precheck in modePrecheck and
// Prepare in modePrepare.
func (m *ClusterMetadata) dryRun(cmd Command, stmts []cql.Parsed, mode applyMode) (*ClusterMetadata, Effects, Outcome, error) {
	refused := Outcome{Epoch: m.Epoch}
	if err := CheckRequestID(cmd.RequestID); err != nil {
		return m, Effects{}, refused, err
	}
	for i, p := range stmts {
		if err := cql.Admit(p); err != nil {
			return m, Effects{}, refused, &StatementError{Position: i + 1, Total: len(stmts), Err: err}
		}
	}
	next, eff, out, err := m.apply(cmd, stmts, m.Index, mode)
	if serr, ok := err.(*StatementError); ok && serr.Applied > 0 {
		// At commit the statements before it would apply; refused up
		// front, none does.
		none := *serr
		none.Applied = 0
		return m, Effects{}, refused, &none
	}
	return next, eff, out, err
}

// Effects is what a command changed: the schema changes to persist, in
// order, and one history record for each epoch it made.
type Effects struct {
	Changes []schema.Change
	Records []*Record
}

// newRecord starts the record of an epoch cmd made at index.
func newRecord(cmd Command, epoch, index uint64) *Record {
	return &Record{Epoch: epoch, Index: index, Time: cmd.Time, Principal: cmd.Principal, Role: cmd.Role, RequestID: cmd.RequestID, feed: newFeedMemo()}
}

// ErrEmptyCommand is returned for a command without any statement.
var ErrEmptyCommand = errors.New("no statement to execute")

// Apply computes what cmd does to m without changing m: the metadata
// after it, the schema changes to persist and the per-statement results. The
// API calls it on the current state to refuse a bad request before it is
// proposed; the state machine calls it again, deterministically, on apply.
// On error next holds the statements that took effect before the failure
// (none for an atomic command), so it may equal m.
func (m *ClusterMetadata) Apply(cmd Command, index uint64) (next *ClusterMetadata, eff Effects, out Outcome, err error) {
	if cmd.Kind == KindSetGuardrails {
		next, out, err = m.SetGuardrails(cmd, index)
		if err == nil && next.Epoch != m.Epoch {
			r := newRecord(cmd, next.Epoch, index)
			r.Events = []Event{{Kind: KindSetGuardrailsEvent, Statement: cmd.Text,
				Guardrails: &GuardrailChange{Before: m.Guardrails, After: next.Guardrails}}}
			eff.Records = []*Record{r}
		}
		return next, eff, out, err
	}
	if cmd.Kind == KindSetKeyspaceGuardrails {
		return m.applyKeyspaceGuardrails(cmd, index)
	}
	if cmd.Kind == KindNameHistory {
		return m.nameHistory(cmd, index)
	}
	stmts, err := cql.Parse(cmd.Text)
	if err != nil {
		return m, eff, Outcome{Epoch: m.Epoch}, &StatementError{Position: 1, Total: 1, Err: err}
	}
	return m.ApplyParsed(cmd, stmts, index)
}

// errNoGuardrails is returned for a guardrails command without settings.
var errNoGuardrails = errors.New("guardrails: no settings in the command")

// SetGuardrails computes the metadata after a KindSetGuardrails command:
// the settings replace the old ones and the epoch goes up by one. An
// OnlyIfUnset command changes nothing once guardrails have been set.
func (m *ClusterMetadata) SetGuardrails(cmd Command, index uint64) (*ClusterMetadata, Outcome, error) {
	if len(cmd.Guardrails) == 0 {
		return m, Outcome{Epoch: m.Epoch}, errNoGuardrails
	}
	g, err := guardrails.DecodeSettings(cmd.Guardrails)
	if err != nil {
		return m, Outcome{Epoch: m.Epoch}, err
	}
	if err := g.Validate(); err != nil {
		return m, Outcome{Epoch: m.Epoch}, err
	}
	if cmd.OnlyIfUnset && m.GuardrailsSet {
		return m, Outcome{Epoch: m.Epoch}, nil
	}
	next := *m
	next.Guardrails, next.GuardrailsSet = g, true
	next.Epoch++
	next.Index = index
	return &next, Outcome{Epoch: next.Epoch}, nil
}

// ApplyParsed is Apply for a DDL command whose statements the caller
// has already parsed from cmd.Text. Guardrails run around every statement:
// Prepare before it (ignored properties), Check after it (thresholds,
// flags, metadata_size), so a failure refuses the statement like a schema
// error does.
func (m *ClusterMetadata) ApplyParsed(cmd Command, stmts []cql.Parsed, index uint64) (next *ClusterMetadata, eff Effects, out Outcome, err error) {
	return m.apply(cmd, stmts, index, modeApply)
}

// applyMode is what apply computes.
type applyMode uint8

const (
	// modeApply is the log's apply: everything, history records included.
	modeApply applyMode = iota
	// modeDryRun is a dry run of a new request: the metadata and the
	// outcome it would make, without history records.
	modeDryRun
	// modePrecheck is the check of a new request that wants only its
	// error (Precheck): apply returns m itself and an outcome without
	// results or warnings, saving their allocations.
	modePrecheck
	// modePrepare is the pre-check of a new request that keeps what the
	// apply would make (Prepare): modeApply's results, history records
	// (at the state's index, for Prepared.at to set) and warnings, and
	// the checks of a new request.
	modePrepare
)

// apply is ApplyParsed in modeApply; in the other modes it checks a
// new request: it checks the admission rules that depend on the change
// (schema.AdmitChange), which the log's apply never does, and, but in
// modePrepare, leaves Effects.Records empty, as it keeps no history.
func (m *ClusterMetadata) apply(cmd Command, stmts []cql.Parsed, index uint64, mode applyMode) (next *ClusterMetadata, eff Effects, out Outcome, err error) {
	records, outcome := mode == modeApply || mode == modePrepare, mode != modePrecheck
	if len(stmts) == 0 {
		return m, eff, Outcome{Epoch: m.Epoch}, ErrEmptyCommand
	}
	if cmd.HasIfEpoch && cmd.IfEpoch != m.Epoch {
		return m, eff, Outcome{Epoch: m.Epoch}, &EpochMovedError{Want: cmd.IfEpoch, Have: m.Epoch}
	}
	s, epoch := m.Schema, m.Epoch
	if outcome {
		out.Results = make([]StatementResult, 0, len(stmts))
	}
	for i, p := range stmts {
		// A non-atomic command gives every change its own epoch; an atomic
		// one is a single change and gets one epoch for all its statements.
		env := schema.Env{DefaultKeyspace: cmd.Keyspace, Epoch: epoch + 1, Rules: cmd.Rules, Cluster: cmd.Cluster}
		if cmd.Atomic {
			env.Epoch, env.Seq = m.Epoch+1, uint32(i)
		}
		ns, diff, res, warns, aerr := m.applyStatement(cmd, p, s, env, mode)
		if aerr != nil {
			serr := &StatementError{Position: i + 1, Total: len(stmts), Err: aerr}
			if cmd.Atomic || i == 0 {
				return m, Effects{}, Outcome{Epoch: m.Epoch}, serr
			}
			serr.Applied = i
			out.Epoch = epoch
			if !outcome {
				return m, eff, out, serr
			}
			return m.with(epoch, index, s), eff, out, serr
		}
		if outcome {
			out.Warnings = append(out.Warnings, warns...)
		}
		if res.Warning != "" && outcome {
			// Cassandra's own warning about the statement, not a
			// guardrail's: it has no guardrail name.
			out.Warnings = append(out.Warnings, guardrails.Warning{Message: res.Warning})
		}
		if res.Applied {
			if records {
				if !cmd.Atomic || len(eff.Records) == 0 {
					eff.Records = append(eff.Records, newRecord(cmd, env.Epoch, index))
				}
				r := eff.Records[len(eff.Records)-1]
				r.Events = append(r.Events, newEvent(s, p.Text, res, diff))
			}
			epoch = env.Epoch
			s = ns
			eff.Changes = appendShared(eff.Changes, diff.Changes)
		}
		if outcome {
			out.Results = append(out.Results, StatementResult{Text: p.Text, Result: res, Epoch: epoch})
		}
	}
	if cmd.Atomic {
		// Every result reports the epoch the command as a whole reached.
		for i := range out.Results {
			out.Results[i].Epoch = epoch
		}
	}
	out.Epoch = epoch
	if !outcome {
		return m, eff, out, nil
	}
	return m.with(epoch, index, s), eff, out, nil
}

// applyStatement runs statement p of cmd on s, the schema the
// statements before it made, with env: the guardrails' Prepare (a nil
// statement is ignored whole: s unchanged, a result of its kind), the
// schema's Apply, in the checking modes the admission rules that depend
// on the change (schema.AdmitChange), and the guardrails' Check. It
// returns the new schema, the diff, the result and the warnings, or the
// error refusing the statement; in modePrecheck Check skips the warnings.
func (m *ClusterMetadata) applyStatement(cmd Command, p cql.Parsed, s schema.Schema, env schema.Env, mode applyMode) (ns schema.Schema, diff schema.Diff, res schema.Result, warns []guardrails.Warning, err error) {
	st, warns := guardrails.Prepare(m.Guardrails, p.Statement)
	if st == nil {
		return s, diff, schema.Result{Kind: p.Statement.Kind()}, warns, nil
	}
	ns, diff, res, err = schema.Apply(s, st, env)
	if err == nil && mode != modeApply {
		// A pre-check (or dry run) of a new request: the admission
		// rules that depend on the change.
		err = schema.AdmitChange(s, ns, st, res)
	}
	if err != nil {
		return ns, diff, res, warns, err
	}
	more, err := guardrails.Check(m.Guardrails, guardrails.Input{
		Statement: st, Result: res, Before: s, After: ns,
		MaxMutationSize: cmd.MaxMutationSize, Overhead: snapshotOverhead(ns, m.Requests, cmd) + overridesOverhead(m.KeyspaceGuardrails),
		Keyspaces: m.KeyspaceGuardrails, ErrorsOnly: mode == modePrecheck,
	})
	return ns, diff, res, append(warns, more...), err
}

// Precheck checks cmd, whose statements the caller parsed from cmd.Text,
// on m as ApplyParsed would apply it, for refusing a request before it
// is proposed, and returns why it cannot apply, or nil: its request id is
// refused (CheckRequestID), a statement breaks an admission rule
// (cql.Admit, schema.Admit: rules the apply does not check, so that
// entries logged before them replay as they applied), or a statement
// fails. A refused request
// applies nothing, so unlike the error of a commit that failed part-way
// the error never says statements were applied (StatementError.Applied
// is 0). Ask Requests.Answer first: a retry of a remembered request is
// answered, not checked. It refuses what Prepare refuses, at less cost,
// keeping nothing; a member that proposes the request prepares it
// instead, so that the apply need not execute it again.
func (m *ClusterMetadata) Precheck(cmd Command, stmts []cql.Parsed) error {
	_, _, _, err := m.dryRun(cmd, stmts, modePrecheck)
	return err
}

// snapshotFixedOverhead bounds the snapshot's headers, section framing,
// checksum and guardrail settings.
const snapshotFixedOverhead = 1024

// snapshotOverhead bounds what a snapshot holds besides the schema records
// of s: a length prefix per record (at most 3 bytes for records under 2
// MiB), the remembered requests, the record cmd itself will leave, and the
// fixed parts. Adding it to s.EncodedSize() bounds the snapshot size, which
// the metadata_size guardrail keeps under max_mutation_size.
func snapshotOverhead(s schema.Schema, reqs Requests, cmd Command) int64 {
	pending := int64(0)
	if cmd.RequestID != "" {
		// The record keeps each statement's kind, names and epoch.
		pending = int64(len(cmd.RequestID)) + 1024
	}
	return 3*s.ObjectCount() + reqs.Bytes() + pending + snapshotFixedOverhead
}

// appendShared is append(dst, src...), except that into an empty dst it
// returns src itself, capped at its length so that a later append copies
// instead of writing into src's array. It saves the copy of a command's
// single change (or record) on every DDL; the elements are shared, which
// is safe because nothing changes a Change or a *Record once made.
func appendShared[T any](dst, src []T) []T {
	switch {
	case len(src) == 0:
		return dst
	case len(dst) == 0:
		return src[:len(src):len(src)]
	}
	return append(dst, src...)
}

// with returns a copy of m at epoch and index holding schema s.
func (m *ClusterMetadata) with(epoch, index uint64, s schema.Schema) *ClusterMetadata {
	next := *m
	next.Epoch, next.Index, next.Schema = epoch, index, s
	return &next
}
