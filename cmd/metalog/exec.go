package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/spf13/cobra"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/internal/safetext"
)

func newExecCmd() *cobra.Command {
	var cf clientFlags
	var text, file, keyspace, requestID string
	var atomic, dryRun bool
	var ifEpoch uint64
	cmd := &cobra.Command{
		Use:   "exec (-e CQL | -f FILE)",
		Short: "Execute CQL DDL statements (separated by ';')",
		Long: `Execute CQL DDL statements (separated by ';') as one request: checked
whole before it is proposed, then applied statement by statement (each with
its epoch), or all or nothing with --atomic. The request carries a request
id (--request-id, or a random one): the client retries it on the next
endpoint under that id, and the cluster applies an id at most once.

` + exitCodesHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			stmts, err := statementsFrom(text, file, cmd.InOrStdin())
			if err != nil {
				return err
			}
			// Without --request-id the client makes a random id, so that its
			// retries never apply twice.
			req := &pb.ExecuteRequest{Statements: stmts, Keyspace: keyspace, RequestId: requestID, Atomic: atomic, DryRun: dryRun}
			if cmd.Flags().Changed("if-epoch") {
				req.IfEpoch = &ifEpoch
			}
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
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "check everything exec checks and print what it would do; nothing is proposed")
	cmd.Flags().Uint64Var(&ifEpoch, "if-epoch", 0, "apply only if the cluster is still at this epoch when the request applies (otherwise FailedPrecondition, nothing applied)")
	return cmd
}

// statementsFrom returns the CQL text of -e, or of the file -f names (-
// for stdin), refusing text that is not UTF-8 before anything is sent.
func statementsFrom(text, file string, stdin io.Reader) (string, error) {
	switch {
	case text != "" && file != "":
		return "", errors.New("give -e or -f, not both")
	case text != "":
		return text, checkUTF8("-e", text)
	case file == "-":
		b, err := io.ReadAll(stdin)
		if err != nil {
			return "", err
		}
		return string(b), checkUTF8("standard input", string(b))
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", err
		}
		return string(b), checkUTF8(file, string(b))
	}
	return "", errors.New("nothing to execute: give -e \"CQL\" or -f file.cql")
}

// checkUTF8 refuses CQL text that is not UTF-8, naming where it came from
// and where its first invalid byte is: a gRPC string must be UTF-8, and the
// request would fail to marshal with an internal error naming neither.
func checkUTF8(source, text string) error {
	off := invalidUTF8(text)
	if off < 0 {
		return nil
	}
	line := 1 + strings.Count(text[:off], "\n")
	col := off - strings.LastIndexByte(text[:off], '\n')
	return fmt.Errorf("%s: not UTF-8: invalid byte 0x%02x at byte offset %d (line %d, byte %d of the line); nothing was sent", source, text[off], off, line, col)
}

// invalidUTF8 returns the offset of the first byte of s that is not valid
// UTF-8, or -1 when s is valid.
func invalidUTF8(s string) int {
	if utf8.ValidString(s) {
		return -1
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// printExecResult prints one line per statement, the warnings and the
// epoch; for a dry run, what would apply and the digest it would make.
func printExecResult(w io.Writer, resp *pb.ExecuteResponse) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	applied := "applied"
	if resp.DryRun {
		applied = "would apply"
	}
	for _, r := range resp.Results {
		obj := objectName(r.Kind, r.Keyspace, r.Table, r.Name)
		what := applied
		if !r.Applied {
			what = "no change"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\tepoch %d\n", safetext.Line(r.Kind), safetext.Line(obj), what, r.Epoch)
	}
	tw.Flush()
	for _, warn := range resp.Warnings {
		fmt.Fprintln(w, "warning:", safetext.Line(warn))
	}
	if resp.DryRun {
		fmt.Fprintf(w, "dry run: nothing was proposed; the schema would be at epoch %d, digest %s\n", resp.Epoch, resp.Digest)
		return
	}
	fmt.Fprintf(w, "epoch %d\n", resp.Epoch)
}
