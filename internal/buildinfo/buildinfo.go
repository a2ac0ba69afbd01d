package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// Unknown stands for what the binary does not record.
const Unknown = "unknown"

// Info is what a binary records of its own build.
type Info struct {
	// Version is the main module's version: a tag, a pseudo-version, or
	// "devel" for a build of a working tree the go command gave none
	// (the module version "(devel)").
	Version string
	// Revision is the commit the binary was built from (vcs.revision),
	// with "-dirty" when the working tree had changes (vcs.modified);
	// Unknown when the build recorded none (go build -buildvcs=false, or
	// a tree outside version control).
	Revision string
	// GoVersion is the Go toolchain that built the binary, e.g. go1.26.8.
	GoVersion string
}

// Read returns the build information of the running binary.
func Read() Info {
	bi, _ := debug.ReadBuildInfo() // nil when it has none
	return From(bi)
}

// From returns the Info that bi records; nil (a binary without build
// information) gives Unknown but for the running Go version.
func From(bi *debug.BuildInfo) Info {
	if bi == nil {
		return Info{Version: Unknown, Revision: Unknown, GoVersion: runtime.Version()}
	}
	i := Info{Version: bi.Main.Version, Revision: Unknown, GoVersion: bi.GoVersion}
	switch i.Version {
	case "(devel)":
		i.Version = "devel"
	case "":
		i.Version = Unknown
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Revision = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && i.Revision != Unknown {
		i.Revision += "-dirty"
	}
	if i.GoVersion == "" {
		i.GoVersion = runtime.Version()
	}
	return i
}

// String is the version, the commit and the Go version on one line, as
// `metalog version` prints them after the program's name:
// "devel (commit 78fba4e5c0d1...-dirty, go1.26.8)".
func (i Info) String() string {
	return fmt.Sprintf("%s (commit %s, %s)", i.Version, i.Revision, i.GoVersion)
}

// NewGauge returns the gauge metalog_build_info, always 1, whose labels
// version, revision and goversion are those of i: a dashboard joins on it
// to show which build each member runs.
func (i Info) NewGauge() prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "metalog_build_info",
		Help:        "Always 1; its labels are the build this member runs: module version, commit (-dirty: changes not committed) and Go version.",
		ConstLabels: prometheus.Labels{"version": i.Version, "revision": i.Revision, "goversion": i.GoVersion},
	}, func() float64 { return 1 })
}
