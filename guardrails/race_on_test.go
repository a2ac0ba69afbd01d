//go:build race

package guardrails_test

// raceEnabled reports a build with the race detector. Its instrumentation
// allocates, so the exact allocation bounds are checked only without it.
const raceEnabled = true
