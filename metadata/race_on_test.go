//go:build race

package metadata

// raceEnabled reports a build with the race detector. Its instrumentation
// allocates, so the exact allocation bounds are checked only without it.
const raceEnabled = true
