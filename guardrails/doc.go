// Package guardrails decides which schema changes to warn about or refuse
// before they hurt the cluster: Cassandra's schema thresholds and feature
// flags, and metalog's metadata_size limit.
//
// It owns the Settings (their defaults, names, validation, and text, YAML and
// binary forms), the per-keyspace Overrides, and the pure checks: Prepare
// before schema.Apply and Check after it, worded as Cassandra words them. It
// does not enforce them: package metadata runs them on every committed
// statement and keeps the settings, and the server answers a *Failure
// (ErrFailed) with FailedPrecondition and returns the warnings.
//
// Every member checks the same committed statements, so Check is
// deterministic, reads only its arguments and must stay so. It costs
// O(changed objects): counts come from the after schema's incremental
// counters, never from a walk of all tables. A threshold of Disabled (-1) is
// off.
//
//	st, warnings := guardrails.Prepare(g, st)
//	if st == nil {
//		return warnings // only ignored properties: nothing to apply
//	}
//	after, diff, res, err := schema.Apply(before, st, env)
//	// handle err
//	more, err := guardrails.Check(g, guardrails.Input{
//		Statement: st, Result: res, Before: before, After: after, MaxMutationSize: 16 << 20,
//	})
//	warnings = append(warnings, more...)
//	if errors.Is(err, guardrails.ErrFailed) {
//		// refused: keep before; err is the message for the client
//	}
package guardrails
