package guardrails_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/metalog/metalog/guardrails"
	"pgregory.net/rapid"
)

// genSettings draws valid settings: thresholds in order, each property in
// at most one set.
func genSettings(t *rapid.T) guardrails.Settings {
	g := guardrails.Defaults()
	set := func(name, value string) {
		var err error
		if g, err = g.Set(name, value); err != nil {
			t.Fatal(err)
		}
	}
	thresholds := rapid.SampledFrom([]int64{-1, 0, 1, 3, 1000, math.MaxInt64})
	for _, name := range guardrails.Names() {
		base, ok := strings.CutSuffix(name, "_warn_threshold")
		switch {
		case ok:
			w, f := thresholds.Draw(t, name), thresholds.Draw(t, base+"_fail_threshold")
			if w != -1 && f != -1 && (w > f) != strings.HasPrefix(base, "minimum") && w != f {
				w, f = f, w
			}
			set(name, strconv.FormatInt(w, 10))
			set(base+"_fail_threshold", strconv.FormatInt(f, 10))
		case strings.HasSuffix(name, "_enabled"):
			set(name, strconv.FormatBool(rapid.Bool().Draw(t, name)))
		}
	}
	for _, level := range []string{"warn", "fail"} {
		lo, _ := g.Get("minimum_replication_factor_" + level + "_threshold")
		hi, _ := g.Get("maximum_replication_factor_" + level + "_threshold")
		l, _ := strconv.ParseInt(lo, 10, 64)
		h, _ := strconv.ParseInt(hi, 10, 64)
		if l != -1 && h != -1 && l > h {
			set("maximum_replication_factor_"+level+"_threshold", "-1")
		}
	}
	sets := []string{"table_properties_warned", "table_properties_ignored", "table_properties_disallowed"}
	var members [3][]string
	for _, prop := range []string{"comment", "cdc", "caching", "gc_grace_seconds"} {
		if i := rapid.IntRange(-1, 2).Draw(t, prop); i >= 0 {
			members[i] = append(members[i], prop)
		}
	}
	for i, name := range sets {
		set(name, strings.Join(members[i], ","))
	}
	return g
}

func TestEncodingRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := genSettings(t)
		if err := g.Validate(); err != nil {
			t.Fatalf("generated invalid settings: %v", err)
		}
		b := guardrails.AppendSettings([]byte("prefix"), g)
		if string(b[:6]) != "prefix" {
			t.Fatal("prefix overwritten")
		}
		got, err := guardrails.DecodeSettings(b[6:])
		if err != nil {
			t.Fatal(err)
		}
		if got != g {
			t.Fatalf("got %+v, want %+v", got, g)
		}
		if !bytes.Equal(guardrails.AppendSettings(nil, got), b[6:]) {
			t.Fatal("encoding not canonical")
		}
	})
}

func TestDecodeSettingsErrors(t *testing.T) {
	good := guardrails.AppendSettings(nil, guardrails.Defaults())
	for name, b := range map[string][]byte{
		"empty":     nil,
		"version":   append([]byte{9}, good[1:]...),
		"truncated": good[:len(good)-1],
		"trailing":  append(append([]byte(nil), good...), 0),
		"count":     {1, 99},
		"unknown":   {1, 1, 99, 0},
		"order":     {1, 2, 3, 2, 2, 2},
		"duplicate": {1, 2, 3, 2, 3, 2},
		"negative":  {1, 1, 3, 3}, // zigzag 3 = -2
		"bool":      {1, 1, 17, 2},
		"set":       {1, 1, 23, 4, 'n', 'o', 'p', 'e'},
		"canonical": {1, 1, 23, 7, 'c', 'o', 'm', 'm', 'e', 'n', 'T'},
		"invalid":   {1, 2, 3, 4, 4, 2}, // warn 2 > fail 1
	} {
		if _, err := guardrails.DecodeSettings(b); err == nil {
			t.Errorf("%s: decoded %x", name, b)
		}
	}
	// An older encoding without some settings decodes them as defaults.
	g, err := guardrails.DecodeSettings(binary.AppendVarint([]byte{1, 1, 4}, 5000))
	if err != nil || g.TablesFailThreshold != 5000 || g.TablesWarnThreshold != 1000 {
		t.Fatalf("partial: %+v %v", g, err)
	}
}

func FuzzDecodeSettings(f *testing.F) {
	f.Add(guardrails.AppendSettings(nil, guardrails.Defaults()))
	g := guardrails.Defaults()
	g, _ = g.Set("table_properties_warned", "comment,cdc")
	g, _ = g.Set("tables_fail_threshold", "20000")
	f.Add(guardrails.AppendSettings(nil, g))
	f.Add([]byte{1, 1, 4, 10})
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := guardrails.DecodeSettings(b)
		if err != nil {
			return
		}
		if err := g.Validate(); err != nil {
			t.Fatalf("decoded invalid settings: %v", err)
		}
		enc := guardrails.AppendSettings(nil, g)
		back, err := guardrails.DecodeSettings(enc)
		if err != nil || back != g {
			t.Fatalf("round trip: %v %+v %+v", err, back, g)
		}
	})
}
