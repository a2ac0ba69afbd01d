package metadata

import (
	"errors"
	"fmt"
	"strings"

	"github.com/metalog/metalog/guardrails"
)

// errNoScope is returned for a per-keyspace guardrails command without a
// scope.
var errNoScope = errors.New("guardrails: no keyspace scope in the command")

// SetKeyspaceGuardrails computes the metadata after a
// KindSetKeyspaceGuardrails command: the override of the scope cmd.Keyspace
// becomes the one in cmd.Guardrails (an empty one removes it) and the
// epoch goes up by one, even when the override stays the same, as for the
// cluster's settings. An OnlyIfUnset command changes nothing once the
// scope has an override (initial values from a config file).
func (m *ClusterMetadata) SetKeyspaceGuardrails(cmd Command, index uint64) (*ClusterMetadata, Outcome, error) {
	refused := Outcome{Epoch: m.Epoch}
	if cmd.Keyspace == "" {
		return m, refused, errNoScope
	}
	if len(cmd.Guardrails) == 0 {
		return m, refused, errNoGuardrails
	}
	o, err := guardrails.DecodeOverride(cmd.Guardrails)
	if err != nil {
		return m, refused, err
	}
	if o.Scope != cmd.Keyspace {
		return m, refused, fmt.Errorf("guardrails: override of %q in a command of scope %q", o.Scope, cmd.Keyspace)
	}
	if _, set := m.KeyspaceGuardrails.Get(o.Scope); cmd.OnlyIfUnset && set {
		return m, refused, nil
	}
	next := *m
	next.KeyspaceGuardrails = m.KeyspaceGuardrails.With(o)
	next.Epoch++
	next.Index = index
	return &next, Outcome{Epoch: next.Epoch}, nil
}

// applyKeyspaceGuardrails is Apply of a KindSetKeyspaceGuardrails
// command: SetKeyspaceGuardrails and the SET GUARDRAILS event with the
// scope.
func (m *ClusterMetadata) applyKeyspaceGuardrails(cmd Command, index uint64) (*ClusterMetadata, Effects, Outcome, error) {
	var eff Effects
	next, out, err := m.SetKeyspaceGuardrails(cmd, index)
	if err == nil && next.Epoch != m.Epoch {
		before, _ := m.KeyspaceGuardrails.Get(cmd.Keyspace)
		after, _ := next.KeyspaceGuardrails.Get(cmd.Keyspace)
		before.Scope, after.Scope = cmd.Keyspace, cmd.Keyspace
		r := newRecord(cmd, next.Epoch, index)
		r.Events = []Event{{Kind: KindSetGuardrailsEvent, Statement: cmd.Text,
			Guardrails: &GuardrailChange{Before: m.Guardrails, After: m.Guardrails, Scope: cmd.Keyspace, OverrideBefore: before, OverrideAfter: after}}}
		eff.Records = []*Record{r}
	}
	return next, eff, out, err
}

// overrideText is the settings of an override, one name=value per line.
func overrideText(o guardrails.Override) string {
	var b strings.Builder
	for _, v := range o.Values() {
		fmt.Fprintf(&b, "%s=%d\n", v.Name, v.Value)
	}
	return b.String()
}

// maxOverrideBytes bounds the encoding of one override in a snapshot: its
// scope (at most 49 bytes and a length), a count, and up to 12 settings of
// a tag and a varint each.
const maxOverrideBytes = 2 + 49 + 1 + 12*(2+10)

// overridesOverhead bounds what the per-keyspace overrides add to a
// snapshot, for the metadata_size guardrail, in O(1).
func overridesOverhead(ov guardrails.Overrides) int64 {
	return int64(ov.Len()) * maxOverrideBytes
}
