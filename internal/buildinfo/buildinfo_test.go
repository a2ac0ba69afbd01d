package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestFrom(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	const rev = "78fba4e5c0d1a2b3c4d5e6f708192a3b4c5d6e7f"
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want Info
	}{
		{"working tree, no VCS stamp", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			Info{"devel", Unknown, "go1.26.8"}},
		{"clean commit", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs("vcs", "git", "vcs.revision", rev, "vcs.modified", "false")},
			Info{"devel", rev, "go1.26.8"}},
		{"changes not committed", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261201000000-78fba4e5c0d1+dirty"}, Settings: vcs("vcs.modified", "true", "vcs.revision", rev)},
			Info{"v0.0.0-20261201000000-78fba4e5c0d1+dirty", rev + "-dirty", "go1.26.8"}},
		{"tagged module", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}},
			Info{"v1.2.3", Unknown, "go1.26.8"}},
		{"modified without a revision", &debug.BuildInfo{Main: debug.Module{Version: ""}, Settings: vcs("vcs.modified", "true")},
			Info{Unknown, Unknown, runtime.Version()}},
		{"no build information", nil, Info{Unknown, Unknown, runtime.Version()}},
	} {
		if got := From(tc.bi); got != tc.want {
			t.Errorf("%s: From = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestString(t *testing.T) {
	i := Info{Version: "devel", Revision: "78fba4e-dirty", GoVersion: "go1.26.8"}
	if got, want := i.String(), "devel (commit 78fba4e-dirty, go1.26.8)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

func TestNewGauge(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(Info{Version: "v1.2.3", Revision: "abc", GoVersion: "go1.26.8"}.NewGauge())
	want := `# HELP metalog_build_info Always 1; its labels are the build this member runs: module version, commit (-dirty: changes not committed) and Go version.
# TYPE metalog_build_info gauge
metalog_build_info{goversion="go1.26.8",revision="abc",version="v1.2.3"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

// TestRead: a test binary has build information, and Read gives every
// field a value.
func TestRead(t *testing.T) {
	i := Read()
	if i.Version == "" || i.Revision == "" || i.GoVersion != runtime.Version() {
		t.Errorf("Read = %+v, want every field set and Go %s", i, runtime.Version())
	}
}
