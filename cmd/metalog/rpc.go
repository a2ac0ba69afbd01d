package main

import (
	"context"

	"github.com/spf13/cobra"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// unary runs one RPC for a subcommand: bounded by --timeout, tried on the
// endpoints in turn (see clientFlags.call), with a gRPC error turned into
// "Code: message".
func unary[T any](cmd *cobra.Command, cf *clientFlags, f func(context.Context, pb.MetadataServiceClient) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(cmd.Context(), cf.timeout)
	defer cancel()
	var resp T
	err := cf.call(ctx, func(ctx context.Context, c pb.MetadataServiceClient) error {
		var err error
		resp, err = f(ctx, c)
		return err
	})
	return resp, describeErr(err)
}
