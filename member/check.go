package member

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// CheckCluster runs the agreement check in one round: the member list with
// every member's status and digest history (one NodeStatus call per other
// member, whatever the number of tables), then a comparison of each member
// with the reference member (the leader when it answered). A split is a
// disagreement too: a member that answers for another cluster, one whose
// configuration lists other members or roles than this member's, and two
// members that each say they lead.
func (cl *Cluster) CheckCluster(ctx context.Context) (*ClusterCheck, error) {
	list, err := cl.ListMembers(ctx)
	if err != nil {
		return nil, err
	}
	resp := &ClusterCheck{Agreement: true, RPCs: uint32(len(list.Members) - 1), ClusterID: list.ClusterID}
	var ref, self *MemberStatus
	for _, pm := range list.Members {
		if pm.Reachable && (ref == nil || pm.Leader || (!ref.Leader && pm.Epoch > ref.Epoch)) {
			ref = pm
		}
		if pm.ID == FormatID(cl.c.id) {
			self = pm
		}
	}
	if ref != nil {
		resp.Reference = ref.Name
	}
	leaders := selfLeaders(list.Members)
	for _, pm := range list.Members {
		c := MemberCheck{Name: pm.Name, ID: pm.ID, Epoch: pm.Epoch, Digest: pm.Digest, AppliedIndex: pm.AppliedIndex, ClusterID: pm.ClusterID}
		c.State, c.DivergedSinceEpoch, c.Detail = judgeMember(pm, ref, self, list.ClusterID, leaders)
		if c.State != "agrees" && c.State != "behind" {
			resp.Agreement = false
		}
		resp.Members = append(resp.Members, c)
	}
	resp.Reason = disagreement(resp.Members, leaders)
	return resp, nil
}

// judgeMember is the verdict on member pm: its state, the epoch its schema
// diverged since (for "diverged"), and why. ref is the reference member,
// self this member (its configuration is the one compared), cluster this
// member's cluster id, leaders the members that say they lead.
func judgeMember(pm, ref, self *MemberStatus, cluster string, leaders []*MemberStatus) (string, uint64, string) {
	switch {
	case pm.ClusterID != "" && cluster != "" && pm.ClusterID != cluster:
		detail := pm.Error
		if detail == "" {
			detail = fmt.Sprintf("answers for cluster %s, not %s", pm.ClusterID, cluster)
		}
		return "split", 0, detail
	case !pm.Reachable:
		return "unreachable", 0, pm.Error
	}
	if d := configDiff(self, pm); d != "" {
		return "split", 0, d
	}
	if len(leaders) > 1 && slices.Contains(leaders, pm) {
		var others []string
		for _, l := range leaders {
			if l != pm {
				others = append(others, fmt.Sprintf("%s (term %d)", l.Name, l.Term))
			}
		}
		return "split", 0, fmt.Sprintf("says it leads (term %d) while %s says so too: two leaders", pm.Term, strings.Join(others, ", "))
	}
	if pm == ref {
		return "agrees", 0, ""
	}
	return compareHistories(ref, pm)
}

// selfLeaders returns the members that answered and say they lead.
func selfLeaders(members []*MemberStatus) []*MemberStatus {
	var out []*MemberStatus
	for _, pm := range members {
		if pm.Reachable && pm.KnownLeader != "" && pm.KnownLeader == pm.ID {
			out = append(out, pm)
		}
	}
	return out
}

// configDiff says how member pm's configuration differs from self's
// (members and roles), "" when it does not (or either is unknown).
func configDiff(self, pm *MemberStatus) string {
	if self == nil || pm == self || len(self.Configuration) == 0 || len(pm.Configuration) == 0 {
		return ""
	}
	mine, theirs := describeConfig(self.Configuration), describeConfig(pm.Configuration)
	if mine == theirs {
		return ""
	}
	detail := fmt.Sprintf("its configuration lists %s; %s's lists %s", theirs, self.Name, mine)
	if pm.AppliedIndex != self.AppliedIndex {
		detail += fmt.Sprintf(" (applied index %d, %s's %d: or one of them has not applied a membership change yet)", pm.AppliedIndex, self.Name, self.AppliedIndex)
	}
	return detail
}

// describeConfig is a configuration as "n1 (voter), n2 (learner)", sorted.
func describeConfig(cfg []ConfigMember) string {
	out := make([]string, len(cfg))
	for i, cm := range cfg {
		name := cm.Name
		if name == "" {
			name = cm.ID
		}
		out[i] = fmt.Sprintf("%s (%s)", name, cm.Role)
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// disagreement is the overall reason of a check, "" when every member
// agrees or is only behind: the members of each kind of disagreement.
func disagreement(checks []MemberCheck, leaders []*MemberStatus) string {
	byState := map[string][]string{}
	for _, c := range checks {
		byState[c.State] = append(byState[c.State], c.Name)
	}
	var parts []string
	if len(leaders) > 1 {
		names := make([]string, len(leaders))
		for i, l := range leaders {
			names[i] = l.Name
		}
		parts = append(parts, "two leaders at once ("+strings.Join(names, ", ")+")")
	}
	for _, st := range []string{"split", "diverged", "unreachable"} {
		if names := byState[st]; len(names) > 0 {
			parts = append(parts, st+": "+strings.Join(names, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// compareHistories compares member pm with the reference at the newest
// epoch both remember: equal digests there mean pm agrees (or is only
// behind); different ones mean pm diverged, at the oldest shared epoch that
// differs.
func compareHistories(ref, pm *MemberStatus) (state string, since uint64, detail string) {
	refAt := map[uint64]string{}
	for _, e := range ref.History {
		refAt[e.Epoch] = e.Digest
	}
	refAt[ref.Epoch] = ref.Digest
	var newest, oldestDiff uint64
	shared, differs := false, false
	hist := append(pm.History, EpochDigest{Epoch: pm.Epoch, Digest: pm.Digest})
	for _, e := range hist {
		d, ok := refAt[e.Epoch]
		if !ok {
			continue
		}
		if !shared || e.Epoch > newest {
			newest = e.Epoch
		}
		shared = true
		if d != e.Digest && (!differs || e.Epoch < oldestDiff) {
			oldestDiff, differs = e.Epoch, true
		}
	}
	switch {
	case differs:
		return "diverged", oldestDiff, fmt.Sprintf("its schema differs from %s's at epoch %d; run `metalog cluster repair %s`", ref.Name, oldestDiff, pm.Name)
	case !shared:
		return "behind", 0, fmt.Sprintf("no epoch in common with %s's recent history (at %d, reference at %d)", ref.Name, pm.Epoch, ref.Epoch)
	case pm.Epoch < ref.Epoch:
		return "behind", 0, fmt.Sprintf("at epoch %d, reference at %d", pm.Epoch, ref.Epoch)
	}
	return "agrees", 0, ""
}

// stillDiverged returns an error when the check says member name still
// diverges from the reference member after its rebuild.
func stillDiverged(check *ClusterCheck, name string) error {
	for _, mc := range check.Members {
		if mc.Name != name || mc.State != "diverged" {
			continue
		}
		return &PreconditionError{Msg: fmt.Sprintf(
			"repair member %s: rebuilt from its own log and newest snapshot, it still differs from %s at epoch %d, so that snapshot already holds the divergence; "+
				"replace the member instead: `metalog cluster remove %s`, delete its data dir, `metalog cluster add` it again and start it with --join (it is then rebuilt from the leader's snapshot)",
			name, check.Reference, mc.DivergedSinceEpoch, name)}
	}
	return nil
}
