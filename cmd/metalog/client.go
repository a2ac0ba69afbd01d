package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// maxResponseBytes bounds one answer the CLI accepts.
const maxResponseBytes = 1 << 30

// clientFlags are the flags every client subcommand takes.
type clientFlags struct {
	endpoints string
	timeout   time.Duration
}

func (f *clientFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.endpoints, "endpoints", "127.0.0.1:7070", "gRPC addresses of metalog members, comma separated")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 15*time.Second, "deadline for the whole command")
}

// call runs fn against the endpoints in turn until one answers with
// something other than Unavailable (or a connection failure), going round
// them again with a growing pause until ctx ends. fn must be safe to retry
// (Execute carries a request id for that).
func (f *clientFlags) call(ctx context.Context, fn func(context.Context, pb.MetadataServiceClient) error) error {
	var eps []string
	for _, ep := range strings.Split(f.endpoints, ",") {
		if ep = strings.TrimSpace(ep); ep != "" {
			eps = append(eps, ep)
		}
	}
	if len(eps) == 0 {
		return errors.New("--endpoints: no endpoint given")
	}
	conns := make([]*grpc.ClientConn, len(eps))
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	pause := 100 * time.Millisecond
	var lastErr error
	for {
		for i, ep := range eps {
			if conns[i] == nil {
				// A whole schema of 100,000 tables is ~10 MB of protobuf.
				c, err := grpc.NewClient(ep, grpc.WithTransportCredentials(insecure.NewCredentials()),
					grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxResponseBytes)))
				if err != nil {
					return fmt.Errorf("--endpoints %s: %w", ep, err)
				}
				conns[i] = c
			}
			err := fn(ctx, pb.NewMetadataServiceClient(conns[i]))
			if status.Code(err) != codes.Unavailable {
				return err
			}
			lastErr = status.Errorf(codes.Unavailable, "%s: %s", ep, status.Convert(err).Message())
		}
		select {
		case <-ctx.Done():
			return lastErr
		case <-time.After(pause):
		}
		pause = min(2*pause, 2*time.Second)
	}
}

// describeErr turns a gRPC error into "Code: message" for the terminal.
func describeErr(err error) error {
	if st, ok := status.FromError(err); ok && err != nil {
		return fmt.Errorf("%s: %s", st.Code(), st.Message())
	}
	return err
}
