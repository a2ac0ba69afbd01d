package member

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// reachTimeout bounds the round of status calls of the strict
// reconfiguration check: a voter that does not answer within it counts as
// unreachable.
const reachTimeout = time.Second

// checkReconfig is the strict reconfiguration check (etcd's
// --strict-reconfig-check): before the membership change what (say
// "remove member n2") is proposed, this member asks every voter for its
// status over the peer port, in one parallel round (it counts itself as
// reachable), and refuses the change with FailedPrecondition, naming the
// unreachable voters, when
//   - the voters it reaches are fewer than a quorum of the voters: no
//     change could commit (not even the removal of a dead member), and
//   - removing (a member's id, 0 for an addition) would leave fewer
//     reachable voters than a quorum of the voters after the removal: the
//     cluster could commit nothing after it.
//
// A change it refuses is not proposed: nothing changes.
func (cl *Cluster) checkReconfig(ctx context.Context, what string, removing uint64) error {
	voters := cl.c.node.Status().Voters
	names := map[uint64]string{}
	addrs := map[uint64]string{}
	for _, p := range cl.c.node.Members() {
		names[p.ID] = FormatID(p.ID)
		if info, err := parseMemberInfo(p.Context); err == nil {
			names[p.ID], addrs[p.ID] = info.Name, info.PeerAddr
		}
	}
	reached := cl.reachVoters(ctx, voters, addrs)
	unreachable := func(ids []uint64) (count int, list string) {
		var down []string
		for _, id := range ids {
			if !reached[id] {
				down = append(down, names[id])
			}
		}
		slices.Sort(down)
		return len(ids) - len(down), strings.Join(down, ", ")
	}
	if up, down := unreachable(voters); up < quorum(len(voters)) {
		return &PreconditionError{Msg: fmt.Sprintf(
			"%s: refused: no quorum of voters reachable (%d of %d, a quorum is %d): %s unreachable, so no membership change can commit; start the unreachable voters again, or recover with --force-new-cluster (see Disaster recovery in the README)",
			what, up, len(voters), quorum(len(voters)), down)}
	}
	if removing == 0 || !slices.Contains(voters, removing) {
		return nil
	}
	after := slices.DeleteFunc(slices.Clone(voters), func(id uint64) bool { return id == removing })
	if up, down := unreachable(after); up < quorum(len(after)) {
		return &PreconditionError{Msg: fmt.Sprintf(
			"%s: refused: it would leave %d reachable of %d voters, fewer than a quorum (%d): %s unreachable; start the unreachable voters again, or remove them first",
			what, up, len(after), quorum(len(after)), down)}
	}
	return nil
}

// quorum is the majority of n voters.
func quorum(n int) int { return n/2 + 1 }

// reachVoters asks each voter but this member, at its peer address (addrs),
// for its status, all at once within reachTimeout, and reports which
// answered; this member is reachable.
func (cl *Cluster) reachVoters(ctx context.Context, voters []uint64, addrs map[uint64]string) map[uint64]bool {
	ctx, cancel := context.WithTimeout(ctx, reachTimeout)
	defer cancel()
	others := make(map[uint64]string, len(voters))
	for _, id := range voters {
		if id != cl.c.id && addrs[id] != "" {
			others[id] = addrs[id]
		}
	}
	reached := map[uint64]bool{cl.c.id: true}
	for id, a := range askStatuses(cl.c.peerContext(ctx), cl.c.peerDial, others) {
		if a.err != nil {
			cl.c.logger.Info("strict reconfiguration check: voter unreachable", "id", FormatID(id), "peer", others[id], "err", a.err)
			continue
		}
		reached[id] = true
	}
	cl.c.statusCalls.Add(float64(len(others)))
	return reached
}
