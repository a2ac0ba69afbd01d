package member

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/metalog/metalog/guardrails"
)

// TestSetKeyspaceGuardrails: a change merges into the scope's override,
// "default" removes a setting, reset the whole override; a retry under
// the same request id applies once; bad input changes nothing.
func TestSetKeyspaceGuardrails(t *testing.T) {
	m := startMember(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e1, o, err := m.Writes().SetKeyspaceGuardrails(ctx, "op", "r1", "shop", map[string]string{"tables_fail_threshold": "2"}, false, false)
	if err != nil || o.String() != "tables_fail_threshold=2" {
		t.Fatalf("set: %v %v", o, err)
	}
	if e, _, err := m.Writes().SetKeyspaceGuardrails(ctx, "op", "r1", "shop", map[string]string{"tables_fail_threshold": "2"}, false, false); err != nil || e != e1 {
		t.Fatalf("retry: epoch %d (first %d), %v", e, e1, err)
	}
	_, o, err = m.Writes().SetKeyspaceGuardrails(ctx, "op", "", "shop", map[string]string{"columns_per_table_fail_threshold": "9"}, false, false)
	if err != nil || o.String() != "columns_per_table_fail_threshold=9 tables_fail_threshold=2" {
		t.Fatalf("merge: %v %v", o, err)
	}
	_, o, err = m.Writes().SetKeyspaceGuardrails(ctx, "op", "", "shop", map[string]string{"tables_fail_threshold": "default"}, false, false)
	if err != nil || o.String() != "columns_per_table_fail_threshold=9" {
		t.Fatalf("default: %v %v", o, err)
	}
	epoch := m.core.sm.Current().Epoch
	for _, bad := range []struct {
		scope string
		set   map[string]string
	}{
		{"sh-op", map[string]string{"tables_fail_threshold": "1"}},
		{"shop", map[string]string{"keyspaces_fail_threshold": "1"}},
		{"shop", map[string]string{"tables_fail_threshold": "x"}},
		{"shop", map[string]string{"tables_warn_threshold": "5", "tables_fail_threshold": "1"}},
		{"shop", nil},
	} {
		if _, _, err := m.Writes().SetKeyspaceGuardrails(ctx, "op", "", bad.scope, bad.set, false, false); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s %v: %v, want InvalidArgument", bad.scope, bad.set, err)
		}
	}
	if m.core.sm.Current().Epoch != epoch {
		t.Fatal("a refused change made an epoch")
	}
	_, o, err = m.Writes().SetKeyspaceGuardrails(ctx, "op", "", "shop", nil, true, false)
	if err != nil || !o.Empty() || m.core.sm.Current().KeyspaceGuardrails.Len() != 0 {
		t.Fatalf("reset: %v %v", o, err)
	}
}

// TestConfigKeyspaceGuardrails: the config file's overrides are proposed
// once, with the cluster's guardrails (here their defaults), which closes
// the window.
func TestConfigKeyspaceGuardrails(t *testing.T) {
	o, _ := guardrails.Override{Scope: "tenant_*"}.Set("tables_fail_threshold", "3")
	m := startMember(t, func(c *Config) { c.KeyspaceGuardrails = guardrails.NewKeyspaceOverrides(o) })
	deadline := time.Now().Add(20 * time.Second)
	for {
		cur := m.core.sm.Current()
		if got, ok := cur.KeyspaceGuardrails.Get("tenant_*"); ok && got == o && cur.GuardrailsSet {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("config overrides not applied: %v, set %v", cur.KeyspaceGuardrails.All(), cur.GuardrailsSet)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if g := m.core.sm.Current().Guardrails; g != guardrails.Defaults() {
		t.Fatalf("cluster guardrails %+v", g)
	}
}

// TestBoundedKeyspaceGuardrails: a caller holding operator for some
// keyspaces only may tighten a keyspace's fail thresholds, never loosen
// them past the cluster's; the refusal changes nothing and matches
// ErrOutOfScope.
func TestBoundedKeyspaceGuardrails(t *testing.T) {
	m := startMember(t, nil)
	ctx := context.Background()
	if _, _, err := m.Writes().SetGuardrails(ctx, "op", "", map[string]string{"tables_warn_threshold": "5", "tables_fail_threshold": "10"}); err != nil {
		t.Fatal(err)
	}
	epoch := m.core.sm.Current().Epoch
	for _, v := range []string{"11", "-1"} {
		_, _, err := m.Writes().SetKeyspaceGuardrails(ctx, "op@shop", "", "shop", map[string]string{"tables_fail_threshold": v}, false, true)
		if !errors.Is(err, ErrOutOfScope) || !errors.Is(err, guardrails.ErrScopedOverride) || !strings.HasPrefix(err.Error(), "guardrails set --keyspace shop: guardrail tables_fail_threshold="+v+": ") {
			t.Errorf("tables_fail_threshold=%s, bounded: %v", v, err)
		}
	}
	if got := m.core.sm.Current(); got.Epoch != epoch || got.KeyspaceGuardrails.Len() != 0 {
		t.Fatalf("a refused change applied: epoch %d -> %d, %d overrides", epoch, got.Epoch, got.KeyspaceGuardrails.Len())
	}
	if _, o, err := m.Writes().SetKeyspaceGuardrails(ctx, "op@shop", "", "shop", map[string]string{"tables_fail_threshold": "10", "tables_warn_threshold": "8"}, false, true); err != nil || o.Len() != 2 {
		t.Fatalf("a threshold at the cluster's, bounded: %v %v", o, err)
	}
	if _, _, err := m.Writes().SetKeyspaceGuardrails(ctx, "op", "", "shop", map[string]string{"tables_fail_threshold": "11"}, false, false); err != nil {
		t.Fatalf("the unscoped operator is not bounded: %v", err)
	}
}
