//go:build metalog_brokenreads

package member

// brokenLinearizableReads makes consistent answer Linearizable reads from
// the member's own state, skipping ReadIndex: a stale read from a member cut
// off from the leader. It exists only so that the integration test
// TestLinearizabilityCatchesBrokenReads can prove its linearizability check
// fails on such a build (go build -tags metalog_faults,metalog_brokenreads);
// never ship a binary built with this tag.
const brokenLinearizableReads = true
