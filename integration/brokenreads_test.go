package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// brokenReadsTags build a metalog that answers linearizable reads from the
// member's own state, skipping ReadIndex (member/brokenreads.go).
const brokenReadsTags = faultsTags + ",metalog_brokenreads"

// brokenReadsRounds bounds the runs TestLinearizabilityCatchesBrokenReads
// makes to find a violation; each partition sends reads to a member that
// cannot know of the writes the majority commits meanwhile, so the first
// run nearly always finds one.
const brokenReadsRounds = 3

// TestLinearizabilityCatchesBrokenReads runs the clients and the
// partitions of TestNemesis (the leader isolated, a follower split off)
// against a build whose linearizable reads skip ReadIndex, and requires
// the checks of TestNemesis to find the history illegal because of the
// reads that members cut off by a partition answered: without it a
// nemesis that never let a stale read through, or a checker that missed
// one, would make TestNemesis pass whatever metalog's reads do.
//
// The broken build also answers stale reads from followers a few
// milliseconds behind, so the whole history alone would prove little about
// the partitions. The check that decides is on the history with only the
// reads sent to a cut-off member (and every write): leaving reads out of a
// linearizable history leaves it linearizable, so if that one is illegal,
// the cut-off members' reads are what make it so.
func TestLinearizabilityCatchesBrokenReads(t *testing.T) {
	for round := 1; round <= brokenReadsRounds; round++ {
		var found bool
		t.Run(fmt.Sprintf("round%d", round), func(t *testing.T) {
			run := runNemesis(t, nemesisConfig{tags: brokenReadsTags, members: 3, kinds: []string{faultIsolate, faultPartition}})
			if run.broken != nil {
				t.Fatalf("the schedule ended early: %v", run.broken)
			}
			held := map[string]bool{}
			for _, m := range run.end.members {
				for id := range m.events {
					held[id] = true
				}
			}
			hist := nemesisHistory(run.ops, func(id string) bool { return held[id] })
			t.Logf("%s; %d reads answered by a member while a partition cut it off", nemesisCounts(run.ops), len(answeredWhileCutOff(run.ops, run.heals)))
			start := time.Now()
			all, undecided := linearizabilityProblems(hist, 30*time.Second)
			t.Logf("porcupine: %d tables of %d illegal, %d undecided, on all %d operations in %v", len(all), schemaTables, len(undecided), len(hist), time.Since(start).Round(time.Millisecond))
			cut := withCutOffReadsOnly(hist)
			start = time.Now()
			problems, undecided := linearizabilityProblems(cut, 30*time.Second)
			t.Logf("porcupine: %d tables of %d illegal, %d undecided, on the %d writes and reads from cut-off members in %v", len(problems), schemaTables, len(undecided), len(cut), time.Since(start).Round(time.Millisecond))
			if len(problems) > 0 && len(all) == 0 {
				t.Fatalf("porcupine finds the whole history legal but a part of it illegal: %v", problems)
			}
			found = len(problems) > 0
		})
		if t.Failed() {
			return
		}
		if found {
			t.Logf("the broken build's reads from cut-off members were found illegal in round %d of at most %d", round, brokenReadsRounds)
			return
		}
	}
	t.Fatalf("in none of %d runs of the broken build did porcupine find the reads from cut-off members illegal: the nemesis lets no stale read through, or the checker misses it", brokenReadsRounds)
}

// withCutOffReadsOnly returns the writes of ops and the reads sent to a
// member a partition had cut off, leaving out every other read.
func withCutOffReadsOnly(ops []porcupine.Operation) []porcupine.Operation {
	var out []porcupine.Operation
	for _, op := range ops {
		if in := op.Input.(schemaInput); in.kind != opRead || in.cutOff {
			out = append(out, op)
		}
	}
	return out
}
