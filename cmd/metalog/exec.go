package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

func newExecCmd() *cobra.Command {
	var cf clientFlags
	var text, file, keyspace, requestID string
	var atomic bool
	cmd := &cobra.Command{
		Use:   "exec (-e CQL | -f FILE)",
		Short: "Execute CQL DDL statements (separated by ';')",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			stmts, err := statementsFrom(text, file, cmd.InOrStdin())
			if err != nil {
				return err
			}
			// Without --request-id the client makes a random id, so that its
			// retries never apply twice.
			req := &pb.ExecuteRequest{Statements: stmts, Keyspace: keyspace, RequestId: requestID, Atomic: atomic}
			resp, err := unary(cmd, &cf, func(ctx context.Context, c *client.Client) (*pb.ExecuteResponse, error) {
				return c.Execute(ctx, req)
			})
			if err != nil {
				return err
			}
			printExecResult(cmd.OutOrStdout(), resp)
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVarP(&text, "execute", "e", "", "CQL statements to execute")
	cmd.Flags().StringVarP(&file, "file", "f", "", "file of CQL statements to execute (- for standard input)")
	cmd.Flags().StringVarP(&keyspace, "keyspace", "k", "", "keyspace for unqualified table names")
	cmd.Flags().StringVar(&requestID, "request-id", "", "request id; a retry with the same id is answered with the first result and never applies twice (default: a random id)")
	cmd.Flags().BoolVar(&atomic, "atomic", false, "apply all statements or none")
	return cmd
}

func statementsFrom(text, file string, stdin io.Reader) (string, error) {
	switch {
	case text != "" && file != "":
		return "", errors.New("give -e or -f, not both")
	case text != "":
		return text, nil
	case file == "-":
		b, err := io.ReadAll(stdin)
		return string(b), err
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", err
		}
		return string(b), nil
	}
	return "", errors.New("nothing to execute: give -e \"CQL\" or -f file.cql")
}

func printExecResult(w io.Writer, resp *pb.ExecuteResponse) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range resp.Results {
		obj := r.Keyspace
		switch {
		case r.Name != "" && r.Table != "":
			obj += "." + r.Name + " ON " + r.Table
		case r.Name != "":
			obj += "." + r.Name
		case r.Table != "":
			obj += "." + r.Table
		}
		what := "applied"
		if !r.Applied {
			what = "no change"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\tepoch %d\n", r.Kind, obj, what, r.Epoch)
	}
	tw.Flush()
	for _, warn := range resp.Warnings {
		fmt.Fprintln(w, "warning:", warn)
	}
	fmt.Fprintf(w, "epoch %d\n", resp.Epoch)
}
