package member

import (
	"context"
	"sort"
	"time"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/metadata"
)

// SetGuardrails validates the change on top of the cluster's current
// settings and commits it through the log, recording principal as who
// asked. It returns the epoch of the change and the settings as this
// member has them once it applied it.
func (w *Writes) SetGuardrails(ctx context.Context, principal, requestID string, set map[string]string) (uint64, guardrails.Settings, error) {
	if len(set) == 0 {
		return 0, guardrails.Settings{}, &ArgumentError{Field: "set", Msg: "set: no guardrail to change"}
	}
	cur := w.sm.Current()
	cmd := metadata.Command{Kind: metadata.KindSetGuardrails, RequestID: requestID, Text: metadata.SetGuardrailsText(set),
		Principal: principal, Time: time.Now().UnixNano()}
	if res, ok := cur.Requests.Answer(cmd); ok {
		// A retry of a change this member applied (or another request's id).
		if res.Err != nil {
			return 0, guardrails.Settings{}, res.Err
		}
		return res.Outcome.Epoch, cur.Guardrails, nil
	}
	if err := metadata.CheckRequestID(requestID); err != nil {
		return 0, guardrails.Settings{}, err
	}
	g, err := setAll(cur.Guardrails, set)
	if err != nil {
		return 0, guardrails.Settings{}, err
	}
	cmd.Guardrails = guardrails.AppendSettings(nil, g)
	epoch, md, err := w.proposeAndWait(ctx, cmd)
	if err != nil {
		return 0, guardrails.Settings{}, err
	}
	// The state machine logs the change, on every member.
	return epoch, md.Guardrails, nil
}

// settable is what setAll changes: guardrails.Settings, or a keyspace's
// guardrails.Override.
type settable[T any] interface {
	Set(name, value string) (T, error)
	Validate() error
}

// setAll gives v the values of set, in name order (so that the first bad
// one reported is the same every time), and validates the result. Its
// errors, which name the setting and the value, are *ArgumentErrors.
func setAll[T settable[T]](v T, set map[string]string) (T, error) {
	names := make([]string, 0, len(set))
	for name := range set {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		var err error
		if v, err = v.Set(name, set[name]); err != nil {
			return v, &ArgumentError{Field: name, Msg: err.Error(), Err: err}
		}
	}
	if err := v.Validate(); err != nil {
		return v, &ArgumentError{Field: "set", Msg: err.Error(), Err: err}
	}
	return v, nil
}

// proposeAndWait commits cmd and waits until this member has applied it,
// returning its epoch and the metadata of that epoch.
func (w *Writes) proposeAndWait(ctx context.Context, cmd metadata.Command) (uint64, *metadata.ClusterMetadata, error) {
	out, err := w.propose(ctx, cmd)
	if err != nil {
		return 0, nil, err
	}
	md, err := w.sm.WaitEpoch(ctx, out.Epoch)
	if err != nil {
		return 0, nil, err
	}
	return out.Epoch, md, nil
}

// applyConfigGuardrails makes Config.Guardrails the cluster's initial ones:
// once this member is ready, if the cluster never had its guardrails set,
// it proposes them as OnlyIfUnset (the first member to commit wins). Once
// set, the cluster's settings rule and a config that differs only earns a
// warning. It starts once ready is closed (the raft node is ready) and
// returns when done or when stop is closed (the member closes).
func (w *Writes) applyConfigGuardrails(ready, stop <-chan struct{}) {
	select {
	case <-ready:
	case <-stop:
		return
	}
	want := w.cfg.Guardrails
	for attempt := 0; ; attempt++ {
		cur := w.sm.Current()
		if cur.GuardrailsSet {
			if cur.Guardrails != want && want != guardrails.Defaults() {
				w.logger.Warn("the guardrails in the config file differ from the cluster's; the cluster's apply (change them with `metalog guardrails set`)")
			}
			return
		}
		if want == guardrails.Defaults() && w.cfg.KeyspaceGuardrails.Len() == 0 {
			// With keyspace overrides in the file, the defaults are
			// proposed too: setting them closes the window in which
			// applyConfigKeyspaceGuardrails proposes the overrides.
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), w.cfg.RequestTimeout)
		_, err := w.propose(ctx, metadata.Command{Kind: metadata.KindSetGuardrails, OnlyIfUnset: true,
			RequestID: "config-guardrails-" + w.cfg.Name, Guardrails: guardrails.AppendSettings(nil, want),
			Principal: "member:" + w.cfg.Name, Time: time.Now().UnixNano()})
		cancel()
		if err == nil {
			w.logger.Info("initial guardrails from the config file proposed")
			continue // re-check: another member's may have won
		}
		w.logger.Warn("could not propose the config file's guardrails; retrying", "err", err, "attempt", attempt)
		select {
		case <-stop:
			return
		case <-time.After(time.Second):
		}
	}
}
