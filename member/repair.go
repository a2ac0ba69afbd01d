package member

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/metalog/metalog/member/internal/peerrpc"
	"github.com/metalog/metalog/raftlog"
)

// RepairMember rebuilds the metadata of the member named by want (a name or
// a hex id) from that member's own raft log and newest snapshot: this
// member directly, any other through PeerService.Repair on its peer
// address, within the request's deadline. It is for a member whose schema
// store went wrong (its digest differs at the same epoch); the log itself
// must be good. Afterwards it checks the cluster again and fails loudly,
// with the steps to replace the member, when the member still differs.
// Another member's refusal is a *PeerError relaying its answer.
func (cl *Cluster) RepairMember(ctx context.Context, want string) (*RepairResult, error) {
	if want == "" {
		return nil, &ArgumentError{Field: "id", Msg: "repair member: the member's name or id is required"}
	}
	found, info, infoErr, ok := cl.find(want)
	if !ok {
		return nil, &MemberNotFoundError{Op: "repair member", Want: want}
	}
	ctx, cancel := withTimeout(ctx, cl.c.timeout)
	defer cancel()
	if found.ID == cl.c.id {
		return cl.c.repairSelf(ctx, FormatID(found.ID))
	}
	if infoErr != nil {
		return nil, &UnavailableError{Msg: fmt.Sprintf("repair member %s: no usable peer address: %v", want, infoErr), Err: infoErr}
	}
	resp, err := peerrpc.Repair(cl.c.peerContext(ctx), cl.c.peerDial, info.PeerAddr, FormatID(found.ID))
	if err != nil {
		if errors.Is(err, peerrpc.ErrUnreachable) {
			return nil, &PeerUnreachableError{Op: "repair member " + info.Name, Addr: info.PeerAddr, Err: err}
		}
		return nil, &PeerError{Member: info.Name, Err: err} // the member's own answer names it
	}
	res := &RepairResult{Name: resp.GetName(), Epoch: resp.GetEpoch(), Digest: resp.GetDigest()}
	// A rebuild from the member's own log and snapshot cannot fix a member
	// whose newest snapshot already holds the divergence: check, and say
	// so loudly rather than report a repair that did not repair.
	check, err := cl.CheckCluster(ctx)
	if err == nil {
		err = stillDiverged(check, res.Name)
	}
	if err != nil {
		cl.c.logger.Error("repair did not bring the member back into agreement", "name", res.Name, "err", err)
		return nil, err
	}
	cl.c.logger.Info("member repaired", "name", res.Name, "id", FormatID(found.ID), "epoch", res.Epoch, "digest", res.Digest)
	return res, nil
}

// repairSelf rebuilds this member's metadata (the schema store rewritten
// completely) with raftlog.Node.Repair and reports its name, epoch and
// digest after it. want, if not empty, must name this member: a request
// meant for another member that reached this one's address is refused.
func (c *core) repairSelf(ctx context.Context, want string) (*RepairResult, error) {
	name := c.name
	if id, ok := parseID(want); want != "" && want != name && (!ok || id != c.id) {
		return nil, &PreconditionError{Msg: fmt.Sprintf("repair member %s: this member is %s (id %s)", want, name, FormatID(c.id))}
	}
	if err := c.applier.failed(); err != nil {
		return nil, &PreconditionError{Msg: fmt.Sprintf("repair member %s: applying the log failed earlier (%v); restart the member instead", name, err), Err: err}
	}
	before := c.sm.Current()
	bd := before.Schema.Digest()
	start := time.Now()
	if err := c.node.Repair(ctx); err != nil {
		c.logger.Error("repair failed", "name", name, "epoch", before.Epoch, "err", err)
		if errors.Is(err, raftlog.ErrRepairUnsupported) {
			return nil, &PreconditionError{Msg: fmt.Sprintf("repair member %s: %v", name, err), Err: err}
		}
		return nil, &OpError{Op: "repair member " + name, Err: err}
	}
	if err := c.applier.failed(); err != nil {
		return nil, fmt.Errorf("repair member %s: replaying the log failed: %v", name, err)
	}
	md := c.sm.Current()
	d := md.Schema.Digest()
	digest := hex.EncodeToString(d[:])
	c.logger.Info("metadata rebuilt from the raft log", "name", name, "epoch", md.Epoch, "digest", digest,
		"previous_epoch", before.Epoch, "previous_digest", hex.EncodeToString(bd[:]), "changed", d != bd,
		"duration", time.Since(start))
	return &RepairResult{Name: name, Epoch: md.Epoch, Digest: digest}, nil
}
