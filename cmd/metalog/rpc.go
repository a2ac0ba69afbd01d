package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/metalog/metalog/client"
)

// unary opens a client for cf and runs one call of a subcommand with it,
// bounded by --timeout (the client tries the endpoints in turn), with a
// gRPC error turned into "Code: message", and a change that may still
// apply into an error that says how to learn what happened (exit 3).
func unary[T any](cmd *cobra.Command, cf *clientFlags, call func(context.Context, *client.Client) (T, error)) (T, error) {
	var resp T
	err := withClient(cmd, cf, func(ctx context.Context, c *client.Client) error {
		var err error
		if resp, err = call(ctx, c); err != nil {
			return commandError(cmd, cf.endpoints, err)
		}
		return nil
	})
	return resp, err
}

// withClient opens a client for cf and calls call with it, within
// --timeout; call's error is returned as it is.
func withClient(cmd *cobra.Command, cf *clientFlags, call func(context.Context, *client.Client) error) error {
	c, err := cf.open()
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(cmd.Context(), cf.timeout)
	defer cancel()
	return call(ctx, c)
}
