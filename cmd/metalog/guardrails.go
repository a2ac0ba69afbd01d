package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

func newGuardrailsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "guardrails",
		Short: "Show and change the cluster's guardrails",
	}
	cmd.AddCommand(newGuardrailsGetCmd(), newGuardrailsSetCmd())
	return cmd
}

func printGuardrails(cmd *cobra.Command, epoch uint64, values []*pb.GuardrailValue) error {
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVALUE\tDEFAULT\tCHANGED")
	for _, v := range values {
		changed := ""
		if v.Changed {
			changed = "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.Name, show(v.Value), show(v.Default), changed)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "epoch %d\n", epoch)
	return nil
}

// show prints an empty value (an empty property set) visibly.
func show(v string) string {
	if v == "" {
		return "[]"
	}
	return v
}

func newGuardrailsGetCmd() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "get",
		Short: "Print every guardrail setting; * marks those that differ from the defaults",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			resp, err := unary(cmd, &cf, func(ctx context.Context, c *client.Client) (*pb.GetGuardrailsResponse, error) {
				return c.GetGuardrails(ctx, &pb.GetGuardrailsRequest{})
			})
			if err != nil {
				return err
			}
			return printGuardrails(cmd, resp.Epoch, resp.Guardrails)
		},
	}
	cf.register(cmd)
	return cmd
}

func newGuardrailsSetCmd() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "set NAME=VALUE...",
		Short: "Change guardrails through the raft log, e.g. set tables_warn_threshold=500 tables_fail_threshold=800",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// The client gives the request a random id, so that its retries
			// never apply twice.
			req := &pb.SetGuardrailsRequest{Set: map[string]string{}}
			for _, a := range args {
				name, value, ok := strings.Cut(a, "=")
				if !ok || name == "" {
					return fmt.Errorf("%q: want NAME=VALUE", a)
				}
				if _, dup := req.Set[name]; dup {
					return fmt.Errorf("%s given twice", name)
				}
				req.Set[name] = value
			}
			resp, err := unary(cmd, &cf, func(ctx context.Context, c *client.Client) (*pb.SetGuardrailsResponse, error) {
				return c.SetGuardrails(ctx, req)
			})
			if err != nil {
				return err
			}
			return printGuardrails(cmd, resp.Epoch, resp.Guardrails)
		},
	}
	cf.register(cmd)
	return cmd
}
