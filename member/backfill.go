package member

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/metadata"
)

// History copying: a member rebuilt from a snapshot (a new member, one far
// behind, a repaired one) lacks the records of the epochs the snapshot
// covers; it copies them from another member, which serves them on
// PeerService.HistoryRecords.
const (
	// historyChunkRecords bounds the records of one HistoryRecordsChunk.
	historyChunkRecords = 256
	// historyChunkBytes bounds a chunk's size (a chunk holds at least one
	// record, however large).
	historyChunkBytes = 1 << 20
	// maxHistoryRecvBytes bounds a chunk a member accepts: one record
	// (a dropped keyspace's, at most) is below max_mutation_size.
	maxHistoryRecvBytes = 256 << 20
	// historyCopyTimeout bounds one copy from one peer.
	historyCopyTimeout = time.Minute
	// historyRetryPause is the wait after a round in which no peer could
	// give the missing history.
	historyRetryPause = time.Second
)

// copyHistory runs until stop is closed: whenever the state machine
// lacks history (HistoryGap), it copies it from the other members, the
// leader first. Without a gap it sleeps until a publish leaves one
// (HistoryGapSignal), not at every epoch.
func (ms *membership) copyHistory(stop <-chan struct{}) {
	for {
		if _, to := ms.sm.HistoryGap(); to == 0 {
			select {
			case <-ms.sm.HistoryGapSignal():
				continue
			case <-stop:
				return
			}
		}
		if err := ms.copyHistoryRound(stop); err != nil {
			ms.logger.Warn("could not copy the missing history from the other members; retrying", "err", err)
			select {
			case <-time.After(historyRetryPause):
			case <-stop:
				return
			}
		}
	}
}

// copyHistoryRound asks each other member in turn, the leader first, for
// the missing history, until none is missing.
func (ms *membership) copyHistoryRound(stop <-chan struct{}) error {
	leader := ms.node.Status().Leader
	members := ms.node.Members()
	var errs []error
	for _, pass := range []bool{true, false} {
		for _, p := range members {
			if p.ID == ms.id || (p.ID == leader) != pass {
				continue
			}
			info, err := parseMemberInfo(p.Context)
			if err != nil {
				continue
			}
			err = ms.copyHistoryFrom(info, stop)
			if _, to := ms.sm.HistoryGap(); to == 0 {
				return nil
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", info.Name, err))
			}
		}
	}
	if len(errs) == 0 {
		return fmt.Errorf("no other member to copy from")
	}
	return fmt.Errorf("%v", errs)
}

// copyHistoryFrom copies what one member has of the missing history.
func (ms *membership) copyHistoryFrom(info memberInfo, stop <-chan struct{}) error {
	from, to := ms.sm.HistoryGap()
	conn, err := grpc.NewClient(info.PeerAddr, ms.peerDial, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxHistoryRecvBytes)))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ms.peerContext(context.Background()), historyCopyTimeout)
	defer cancel()
	go func() { // the member closing ends the copy
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	stream, err := pb.NewPeerServiceClient(conn).HistoryRecords(ctx, &pb.HistoryRecordsRequest{FromEpoch: from, ToEpoch: to})
	if err != nil {
		return err
	}
	for {
		chunk, err := stream.Recv()
		if err != nil {
			return err // io.EOF: the peer sent all it has
		}
		_, left, err := ms.sm.FillHistory(chunk.GetRecords(), chunk.GetOldestEpoch())
		if err != nil || left == 0 {
			return err
		}
	}
}

// HistoryRecords implements pb.PeerServiceServer: this member's encoded
// history records of the epochs in (from_epoch, to_epoch] it has, oldest
// first, in chunks.
func (p *peerServer) HistoryRecords(req *pb.HistoryRecordsRequest, stream grpc.ServerStreamingServer[pb.HistoryRecordsChunk]) error {
	if err := p.ms.checkCaller(stream.Context()); err != nil {
		return err
	}
	from, to := req.GetFromEpoch(), req.GetToEpoch()
	if to < from {
		return status.Errorf(codes.InvalidArgument, "to_epoch %d is before from_epoch %d", to, from)
	}
	p.ms.logger.Info("history records asked by a peer", "caller", callerOf(stream.Context()).String(), "from_epoch", from, "to_epoch", to)
	for from < to {
		recs, oldest, err := p.ms.sm.EncodedHistory(from, to, historyChunkRecords)
		var pruned *metadata.PrunedError
		if errors.As(err, &pruned) {
			return status.Error(codes.OutOfRange, pruned.Error())
		}
		if err != nil {
			return historyError(err)
		}
		if len(recs) == 0 {
			return nil // this member has no more (it is behind)
		}
		chunk := &pb.HistoryRecordsChunk{OldestEpoch: oldest}
		size := 0
		for _, r := range recs {
			if size > 0 && size+len(r) > historyChunkBytes {
				break
			}
			chunk.Records = append(chunk.Records, r)
			size += len(r)
		}
		if err := stream.Send(chunk); err != nil {
			return err
		}
		// The next read starts after the last record sent.
		last, err := metadata.RecordEpoch(chunk.Records[len(chunk.Records)-1])
		if err != nil {
			return status.Error(codes.Internal, err.Error())
		}
		from = last
	}
	return nil
}
