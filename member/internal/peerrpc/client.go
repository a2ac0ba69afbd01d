package peerrpc

import (
	"context"
	"time"

	"google.golang.org/grpc"
)

// NodeStatus asks the member at peerAddr for its status, within timeout,
// once it has applied minEpoch or waited a little for it (0: at once).
// Its error is the call's own, which raftlog.ForcingOf,
// raftlog.MismatchOf and connfail.Of read.
func NodeStatus(ctx context.Context, creds grpc.DialOption, peerAddr string, minEpoch uint64, timeout time.Duration) (*PeerMember, error) {
	conn, err := grpc.NewClient(peerAddr, creds)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return NodeStatusOn(ctx, conn, &NodeStatusRequest{MinEpoch: minEpoch})
}

// NodeStatusOn asks the server of conn for its member's status as req
// says; its error is the call's own.
func NodeStatusOn(ctx context.Context, conn *grpc.ClientConn, req *NodeStatusRequest) (*PeerMember, error) {
	return NewPeerServiceClient(conn).NodeStatus(ctx, req)
}

// Repair asks the member at peerAddr to rebuild its metadata from its own
// log; id names it (the member refuses when it is another). An error is
// an *Error.
func Repair(ctx context.Context, creds grpc.DialOption, peerAddr, id string) (*PeerRepairResponse, error) {
	conn, err := grpc.NewClient(peerAddr, creds)
	if err != nil {
		return nil, unreachable(peerAddr, err)
	}
	defer conn.Close()
	resp, err := NewPeerServiceClient(conn).Repair(ctx, &PeerRepairRequest{Id: id})
	return resp, fromStatus(err)
}

// CopyHistory streams the encoded history records of (from, to] from the
// member at peerAddr, accepting messages of up to maxRecv bytes, and
// hands each chunk to fill until fill says nothing is left or fails, or
// the peer has sent all it has (nil). Its errors are the call's own.
func CopyHistory(ctx context.Context, creds grpc.DialOption, peerAddr string, from, to uint64, maxRecv int,
	fill func(records [][]byte, oldest uint64) (done bool, err error)) error {
	conn, err := grpc.NewClient(peerAddr, creds, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxRecv)))
	if err != nil {
		return err
	}
	defer conn.Close()
	stream, err := NewPeerServiceClient(conn).HistoryRecords(ctx, &HistoryRecordsRequest{FromEpoch: from, ToEpoch: to})
	if err != nil {
		return err
	}
	for {
		chunk, err := stream.Recv()
		if err != nil {
			return err // io.EOF: the peer sent all it has
		}
		if done, err := fill(chunk.GetRecords(), chunk.GetOldestEpoch()); err != nil || done {
			return err
		}
	}
}
