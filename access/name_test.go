package access

import (
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestCheckName(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  string // "" when accepted
	}{
		{"n1", ""},
		{"metalog-eu-west-1a.node_03", ""},
		{"nœud", ""},
		{"ops@shop", ""},
		{"a#b", ""},
		{strings.Repeat("x", MaxNameLen), ""},
		{"", "bad name: empty"},
		{"a,b", `',' at byte 2`},
		{"bad=name", `'=' at byte 4`},
		{"bad name", `' ' at byte 4`},
		{"tab\there", `'\t' at byte 4`},
		{"nl\n", `'\n' at byte 3`},
		{"nbsp\u00a0x", `'\u00a0' at byte 5`},
		{"bell\a", `'\a' at byte 5`},
		{"admin\u202e", `'\u202e' at byte 6`},
		{"iso\u2066late", `'\u2066' at byte 4`},
		{"mark\u200e", `'\u200e' at byte 5`},
		{"#comment", "starts with '#'"},
		{"bad\xff", "not valid UTF-8"},
		{strings.Repeat("x", MaxNameLen+1), "is 65 bytes long"},
	} {
		err := CheckName(tc.name)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("CheckName(%q) = %v; want accepted", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrBadName)):
			t.Errorf("CheckName(%q) = %v; want ErrBadName saying %q", tc.name, err, tc.err)
		case err != nil && !strings.Contains(err.Error(), NameRule):
			t.Errorf("CheckName(%q) = %v; want the rule in the message", tc.name, err)
		}
	}
}

// TestCheckedNamesSurviveWhereTheyAreWritten: a name CheckName accepts
// reads back whole from an --initial-cluster entry and from a token file
// line, the two places a separator in it would break.
func TestCheckedNamesSurviveWhereTheyAreWritten(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		name := rapid.String().Draw(t, "name")
		if CheckName(name) != nil {
			return
		}
		entry := name + "=127.0.0.1:7071," + name + "=127.0.0.1:7072"
		for _, part := range strings.Split(entry, ",") {
			if got, _, _ := strings.Cut(part, "="); got != name {
				t.Fatalf("initial cluster entry %q reads back name %q", part, got)
			}
		}
		line := name + " 0123abcd reader"
		if f := strings.Fields(line); len(f) != 3 || f[0] != name || strings.HasPrefix(strings.TrimSpace(line), "#") {
			t.Fatalf("token file line %q reads back %q", line, f)
		}
	})
}
