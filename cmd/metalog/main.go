package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "metalog:", err)
		os.Exit(exitCode(err))
	}
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
2 is kept for plan's "changes pending".`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionLine(), // --version
	}
	root.SetFlagErrorFunc(flagParseError)
	root.SetVersionTemplate("{{.Version}}")
	root.AddCommand(newServeCmd(), newExecCmd(), newRequestCmd(), newPlanCmd(), newApplyCmd(), newDiffCmd(), newDescribeCmd(), newWatchCmd(), newHistoryCmd(), newSnapshotCmd(), newClusterCmd(), newGuardrailsCmd(), newBenchCmd(), newTokenCmd(), newVersionCmd())
	return root
}
