package member

import (
	"context"
	"fmt"
	"strconv"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// fetchMembers asks a running member for the cluster's members and id,
// and checks this member has been added (by `metalog cluster add`): it
// returns the raft id the cluster gave it, found by its name and peer
// address.
func (m *Member) fetchMembers(addr string) (members []*pb.Member, cluster, self uint64, err error) {
	creds := grpc.WithTransportCredentials(insecure.NewCredentials())
	if m.cfg.JoinTLS != nil {
		creds = grpc.WithTransportCredentials(credentials.NewTLS(m.cfg.JoinTLS))
	}
	conn, err := grpc.NewClient(addr, creds)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("join %s: %w", addr, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), m.cfg.RequestTimeout)
	defer cancel()
	resp, err := pb.NewMetadataServiceClient(conn).ListMembers(ctx, &pb.ListMembersRequest{})
	if err != nil {
		return nil, 0, 0, fmt.Errorf("join %s: listing members: %w", addr, err)
	}
	if resp.ClusterId != "" {
		if cluster, err = strconv.ParseUint(resp.ClusterId, 16, 64); err != nil {
			return nil, 0, 0, fmt.Errorf("join %s: cluster id %q: %v", addr, resp.ClusterId, err)
		}
	}
	name, peerAddr := m.cfg.Name, m.cfg.PeerAddr
	for _, pm := range resp.Members {
		if pm.Name == name {
			if pm.PeerAddr != peerAddr {
				return nil, 0, 0, fmt.Errorf("join %s: member %s was added with peer address %s, but this member's --peer-addr is %s", addr, pm.Name, pm.PeerAddr, peerAddr)
			}
			id, ok := parseID(pm.Id)
			if !ok {
				return nil, 0, 0, fmt.Errorf("join %s: member %s is listed with id %q, which is not a member id", addr, pm.Name, pm.Id)
			}
			return resp.Members, cluster, id, nil
		}
	}
	return nil, 0, 0, fmt.Errorf("join %s: %s is not a member yet; run `metalog cluster add --name %s --peer-addr %s --endpoints %s` first",
		addr, name, name, peerAddr, addr)
}
