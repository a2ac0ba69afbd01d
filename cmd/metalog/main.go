package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/metalog/metalog/internal/safetext"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		if !errors.Is(err, errChangesPending) {
			printError(os.Stderr, err)
		}
		os.Exit(exitCode(err))
	}
}

// printError prints a command's error as "metalog: ...", escaped: it
// quotes what the server and its users wrote (names, request ids,
// messages), and a control or bidirectional character there must not act
// on the terminal. New lines are kept: an outcome-unknown error is of
// several lines, and the server's messages in it are escaped whole
// (describeErr).
func printError(w io.Writer, err error) {
	fmt.Fprintln(w, "metalog:", safetext.Block(err.Error()))
}

// escapeOutput puts a safetext.Writer on cmd's output and error output,
// before any subcommand runs: every byte a command prints goes through
// it, so that stored text (names, comments, request ids, principals,
// statements) shows escaped however a printer forgot it. Printers still
// escape the fields they know (safetext.Line, Field) so that a new line
// or a space inside one cannot make it read as more lines or fields.
func escapeOutput(cmd *cobra.Command, _ []string) {
	cmd.SetOut(safetext.NewWriter(cmd.OutOrStdout()))
	cmd.SetErr(safetext.NewWriter(cmd.ErrOrStderr()))
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "metalog",
		Short: "A consensus-backed metadata log for CQL schemas",
		Long: `A consensus-backed metadata log for CQL schemas: "metalog serve" runs a
member, the other commands are its clients.

Exit codes: 0 ok; 1 failure; 3 outcome unknown: a change (exec, apply,
guardrails set, cluster add or remove) was proposed and may still apply,
and the message says how to learn what happened ("metalog request ID");
2 changes pending, for "plan --detailed-exitcode" only.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionLine(), // --version
		// Subcommands define no PersistentPreRun of their own, so this
		// one runs for every one of them.
		PersistentPreRun: escapeOutput,
	}
	root.SetFlagErrorFunc(flagParseError)
	root.SetVersionTemplate("{{.Version}}")
	root.AddCommand(newServeCmd(), newExecCmd(), newRequestCmd(), newPlanCmd(), newApplyCmd(), newDiffCmd(), newDescribeCmd(), newWatchCmd(), newHistoryCmd(), newBackupCmd(), newSnapshotCmd(), newClusterCmd(), newGuardrailsCmd(), newBenchCmd(), newTokenCmd(), newCheckCmd(), newVersionCmd())
	return root
}
