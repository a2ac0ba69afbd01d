// Package guardrails holds metalog's guardrails, the limits that refuse or
// warn about schema changes before they hurt the cluster: Cassandra's
// schema thresholds (keyspaces, tables, columns per table, secondary
// indexes per table, materialized views per table, fields per user type,
// vector dimensions, minimum and maximum replication factor), each a warn
// and a fail value with -1 disabling it; the feature flags
// (drop_keyspace_enabled, drop_truncate_table_enabled,
// alter_table_enabled, secondary_indexes_enabled, simplestrategy_enabled,
// uncompressed_tables_enabled, metadata_size_enabled), and Cassandra's
// dynamic_data_masking_enabled, user_defined_functions_enabled and
// materialized_views_enabled (off by default, as in Cassandra); the table
// property sets (warned, ignored, disallowed); and metalog's own
// metadata_size, which keeps the encoded schema under max_mutation_size so
// snapshots can always be written.
//
// It owns the settings (Settings, their defaults, validation, their text,
// YAML and binary forms) and the pure checks (Prepare before schema.Apply,
// Check after it) with their Cassandra-worded warnings and failures. It
// does not own the enforcement plumbing: the metadata state machine runs
// the checks on every committed statement and keeps the settings in
// ClusterMetadata, the write path pre-checks a request on the receiving
// node's current view, the API maps ErrFailed to FailedPrecondition and
// returns the warnings, and the configuration file and `metalog guardrails
// set` reach the settings through the Raft log.
//
// The package is pure: no I/O, no clocks. Settings is a comparable value;
// it is set from the `guardrails:` section of the configuration file
// (UnmarshalYAML), from `metalog guardrails set` (Set, then Validate), and
// travels through the Raft log, the schema store and snapshots in the
// encoding of AppendSettings/DecodeSettings. Every node runs the same
// checks on the same committed entries, so Check must stay deterministic:
// it reads only its arguments.
//
// A DDL statement goes through Prepare (which strips ignored table
// properties) before schema.Apply, and through Check after it. Check costs
// O(changed objects): counts come from the after schema's incremental
// counters, never from a walk of all tables.
//
// Usage:
//
//	g := guardrails.Defaults()
//	g, err := g.Set("tables_fail_threshold", "5000")
//	if err == nil {
//		err = g.Validate()
//	}
//	...
//	st, warnings := guardrails.Prepare(g, st)
//	if st == nil {
//		return warnings // only ignored properties: nothing to apply
//	}
//	after, diff, res, err := schema.Apply(before, st, env)
//	if err != nil { ... }
//	more, err := guardrails.Check(g, guardrails.Input{
//		Statement: st, Result: res, Before: before, After: after,
//		MaxMutationSize: 16 << 20,
//	})
//	warnings = append(warnings, more...)
//	if errors.Is(err, guardrails.ErrFailed) {
//		// refused: keep before, return err.Error() to the client
//	}
//	// publish after and diff, return warnings with the result
//
// Per-keyspace overrides (Override, Overrides; see keyspace.go) change the
// count guardrails inside a keyspace or a keyspace pattern (tenant_*):
// Input.Keyspaces carries them into Check, which takes the per-object
// thresholds from the override that applies to the changed keyspace (the
// exact one, else the longest matching pattern) and bounds the keyspace's
// own tables by its tables_* besides the cluster's total.
// CheckScopedOverride checks what a keyspace-scoped operator may set.
//
// Messages follow Cassandra's wording, prefixed with the setting that
// triggered: "Guardrail tables_warn_threshold violated: Creating table
// ks.t1001, current number of tables 1001 exceeds warning threshold of
// 1000."
package guardrails
