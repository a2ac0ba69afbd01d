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

// clientFlags are the flags every client subcommand takes.
type clientFlags struct {
	endpoints string
	timeout   time.Duration
}

func (f *clientFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.endpoints, "endpoints", "127.0.0.1:7070", "gRPC addresses of metalog members, comma separated")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 15*time.Second, "deadline for the whole command")
}

// call runs fn against the endpoints in order until one answers with
// something other than Unavailable (or a connection failure).
func (f *clientFlags) call(ctx context.Context, fn func(context.Context, pb.MetadataServiceClient) error) error {
	eps := strings.Split(f.endpoints, ",")
	var lastErr error
	for _, ep := range eps {
		ep = strings.TrimSpace(ep)
		if ep == "" {
			continue
		}
		conn, err := grpc.NewClient(ep, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			lastErr = fmt.Errorf("%s: %w", ep, err)
			continue
		}
		err = fn(ctx, pb.NewMetadataServiceClient(conn))
		conn.Close()
		if status.Code(err) != codes.Unavailable {
			return err
		}
		lastErr = fmt.Errorf("%s: %s", ep, status.Convert(err).Message())
		if ctx.Err() != nil {
			break
		}
	}
	if lastErr == nil {
		return errors.New("--endpoints: no endpoint given")
	}
	return lastErr
}

// describeErr turns a gRPC error into "Code: message" for the terminal.
func describeErr(err error) error {
	if st, ok := status.FromError(err); ok && err != nil {
		return fmt.Errorf("%s: %s", st.Code(), st.Message())
	}
	return err
}
