package member

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/metadata"
)

// SetKeyspaceGuardrails changes the per-keyspace guardrail override of
// scope (a keyspace name, or a prefix pattern such as tenant_*) on top of
// the one the cluster has, and commits it through the log, recording
// principal as who asked: set gives settings their new values ("default"
// removes one), reset removes the scope's whole override first. It
// returns the epoch of the change and the scope's override as this member
// has it once it applied it (empty when none is left). Settings an
// override cannot hold, bad values and bad scopes are InvalidArgument.
// bounded is set for a caller whose operator role is scoped to keyspaces
// (operator@shop): its fail thresholds may not go above the cluster's
// (guardrails.CheckScopedOverride; the error matches ErrOutOfScope). Which
// scopes a caller may change is the API's to check.
func (w *Writes) SetKeyspaceGuardrails(ctx context.Context, principal, requestID, scope string, set map[string]string, reset, bounded bool) (uint64, guardrails.Override, error) {
	scope, err := guardrails.ParseScope(scope)
	if err != nil {
		return 0, guardrails.Override{}, &ArgumentError{Field: "keyspace", Msg: err.Error(), Err: err}
	}
	if len(set) == 0 && !reset {
		return 0, guardrails.Override{}, &ArgumentError{Field: "set", Msg: "set: no guardrail to change for keyspace " + scope + " (give name=value, or reset)"}
	}
	text := metadata.SetGuardrailsText(set)
	if reset {
		text = "reset\n" + text
	}
	cur := w.sm.Current()
	cmd := metadata.Command{Kind: metadata.KindSetKeyspaceGuardrails, RequestID: requestID, Keyspace: scope, Text: text,
		Principal: principal, Time: time.Now().UnixNano()}
	if res, ok := cur.Requests.Answer(cmd); ok {
		// A retry of a change this member applied (or another request's id).
		if res.Err != nil {
			return 0, guardrails.Override{}, res.Err
		}
		o, _ := cur.KeyspaceGuardrails.Get(scope)
		return res.Outcome.Epoch, o, nil
	}
	if err := metadata.CheckRequestID(requestID); err != nil {
		return 0, guardrails.Override{}, err
	}
	if bounded {
		if err := guardrails.CheckScopedOverride(cur.Guardrails, set); err != nil {
			if errors.Is(err, guardrails.ErrScopedOverride) {
				return 0, guardrails.Override{}, &boundedOverrideError{scope: scope, err: err}
			}
			return 0, guardrails.Override{}, &ArgumentError{Field: "set", Msg: err.Error(), Err: err}
		}
	}
	o, _ := cur.KeyspaceGuardrails.Get(scope)
	if reset {
		o = guardrails.Override{}
	}
	o.Scope = scope
	if o, err = setAll(o, set); err != nil {
		return 0, guardrails.Override{}, err
	}
	cmd.Guardrails = guardrails.AppendOverride(nil, o)
	epoch, md, err := w.proposeAndWait(ctx, cmd)
	if err != nil {
		return 0, guardrails.Override{}, err
	}
	got, _ := md.KeyspaceGuardrails.Get(scope)
	got.Scope = scope
	return epoch, got, nil
}

// applyConfigKeyspaceGuardrails proposes Config.KeyspaceGuardrails, the
// initial per-keyspace overrides of a new cluster: once this member is
// ready, while the cluster's guardrails were never set, each as
// OnlyIfUnset (a no-op when its scope has an override). It runs before
// applyConfigGuardrails, whose OnlyIfUnset change of the cluster's
// settings (made even when they are the defaults, see there) closes the
// window: a restart after an operator removed an override does not bring
// it back. It starts once ready is closed and returns when done or when
// stop is closed.
func (w *Writes) applyConfigKeyspaceGuardrails(ready, stop <-chan struct{}) {
	select {
	case <-ready:
	case <-stop:
		return
	}
	for _, o := range w.cfg.KeyspaceGuardrails.List() {
		for attempt := 0; ; attempt++ {
			cur := w.sm.Current()
			if cur.GuardrailsSet {
				return
			}
			if _, set := cur.KeyspaceGuardrails.Get(o.Scope); set {
				break
			}
			ctx, cancel := context.WithTimeout(context.Background(), w.cfg.RequestTimeout)
			_, err := w.propose(ctx, metadata.Command{Kind: metadata.KindSetKeyspaceGuardrails, OnlyIfUnset: true, Keyspace: o.Scope,
				RequestID: "config-keyspace-guardrails-" + w.cfg.Name + "-" + o.Scope, Guardrails: guardrails.AppendOverride(nil, o),
				Principal: "member:" + w.cfg.Name, Time: time.Now().UnixNano()})
			cancel()
			if err == nil {
				w.logger.Info("initial keyspace guardrails from the config file proposed", "scope", o.Scope, "override", o.String())
				break
			}
			w.logger.Warn("could not propose the config file's keyspace guardrails; retrying", "scope", o.Scope, "err", err, "attempt", attempt)
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
			}
		}
	}
}

// boundedOverrideError is an override a keyspace-scoped operator may not
// set, as it loosens a fail threshold of the cluster's; it matches
// ErrOutOfScope (PermissionDenied).
type boundedOverrideError struct {
	scope string
	err   error // from guardrails.CheckScopedOverride
}

func (e *boundedOverrideError) Error() string {
	return fmt.Sprintf("guardrails set --keyspace %s: %v; nothing was changed", e.scope, e.err)
}

// Is matches ErrOutOfScope.
func (e *boundedOverrideError) Is(target error) bool { return target == ErrOutOfScope }

// Unwrap gives the guardrails error (ErrScopedOverride).
func (e *boundedOverrideError) Unwrap() error { return e.err }
