package member

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/internal/connfail"
	"github.com/metalog/metalog/member/internal/peerrpc"
	"github.com/metalog/metalog/raftlog"
)

// fetchMembers asks a running member for the cluster's members and id,
// and checks this member has been added (by `metalog cluster add`): it
// returns the raft id the cluster gave it, found by its name and peer
// address, and whether the cluster names its history through its log
// (history_named; false from a member of a version before history
// names, whose cluster never does).
func (c *core) fetchMembers(addr string) (members []*pb.Member, cluster, self uint64, named bool, err error) {
	creds := grpc.WithTransportCredentials(insecure.NewCredentials())
	if c.cfg.JoinTLS != nil {
		creds = grpc.WithTransportCredentials(credentials.NewTLS(c.cfg.JoinTLS))
	}
	conn, err := grpc.NewClient(addr, creds)
	if err != nil {
		return nil, 0, 0, false, fmt.Errorf("join %s: %w", addr, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.RequestTimeout)
	defer cancel()
	// Should addr be a peer port (joinError asks it who it is), this
	// member names itself there, as a member that was just added.
	ctx = metadata.AppendToOutgoingContext(ctx, raftlog.PeerMemberNameKey, c.cfg.Name)
	resp, err := pb.NewMetadataServiceClient(conn).ListMembers(ctx, &pb.ListMembersRequest{})
	if err != nil {
		return nil, 0, 0, false, joinError(ctx, conn, addr, err)
	}
	if resp.ClusterId != "" {
		if cluster, err = strconv.ParseUint(resp.ClusterId, 16, 64); err != nil {
			return nil, 0, 0, false, fmt.Errorf("join %s: cluster id %q: %v", addr, resp.ClusterId, err)
		}
	}
	name, peerAddr := c.cfg.Name, c.cfg.PeerAddr
	for _, pm := range resp.Members {
		if pm.Name == name {
			if pm.PeerAddr != peerAddr {
				return nil, 0, 0, false, fmt.Errorf("join %s: member %s was added with peer address %s, but this member's --peer-addr is %s", addr, pm.Name, pm.PeerAddr, peerAddr)
			}
			id, ok := parseID(pm.Id)
			if !ok {
				return nil, 0, 0, false, fmt.Errorf("join %s: member %s is listed with id %q, which is not a member id", addr, pm.Name, pm.Id)
			}
			return resp.Members, cluster, id, resp.GetHistoryNamed(), nil
		}
	}
	return nil, 0, 0, false, fmt.Errorf("join %s: %s is not a member yet; run `metalog cluster add --name %s --peer-addr %s --endpoints %s` first",
		addr, name, name, peerAddr, addr)
}

// ErrJoinWrongPort is the error of a --join address that is not a
// member's gRPC client address: its peer port, or its HTTP port.
var ErrJoinWrongPort = errors.New("join: wrong port")

// joinError is the error of a join whose ListMembers call to addr, on
// conn, failed with err: it says which port addr is when it is a member's
// other one (gRPC without the client service: the peer port, which
// answers NodeStatus with the member's client address; an HTTP server: the
// HTTP port) and which is needed.
func joinError(ctx context.Context, conn *grpc.ClientConn, addr string, err error) error {
	const want = "--join needs a member's gRPC client address (--grpc-addr"
	kind, _ := connfail.Of(err)
	msg, unimplemented := peerrpc.Unimplemented(err)
	switch {
	case kind == connfail.NotGRPC:
		return fmt.Errorf("%w: --join %s reached an HTTP server, most likely a member's HTTP port (--http-addr); %s); nothing was written",
			ErrJoinWrongPort, addr, want)
	case unimplemented:
		st, serr := peerrpc.NodeStatusOn(ctx, conn, &peerrpc.NodeStatusRequest{})
		if serr != nil || st.GetGrpcAddr() == "" {
			return fmt.Errorf("%w: --join %s reached a gRPC server without metalog's client service (%v), most likely a member's peer port (--peer-addr); %s); nothing was written",
				ErrJoinWrongPort, addr, msg, want)
		}
		return fmt.Errorf("%w: --join %s reached member %s's peer port (--peer-addr); %s, e.g. %s); nothing was written",
			ErrJoinWrongPort, addr, st.GetName(), want, st.GetGrpcAddr())
	}
	return fmt.Errorf("join %s: listing members: %w", addr, err)
}
