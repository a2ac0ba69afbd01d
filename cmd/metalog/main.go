package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "metalog:", err)
		os.Exit(1)
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "metalog",
		Short:         "A consensus-backed metadata log for CQL schemas",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionLine(), // --version
	}
	root.SetFlagErrorFunc(flagParseError)
	root.SetVersionTemplate("{{.Version}}")
	root.AddCommand(newServeCmd(), newExecCmd(), newPlanCmd(), newApplyCmd(), newDiffCmd(), newDescribeCmd(), newWatchCmd(), newHistoryCmd(), newSnapshotCmd(), newClusterCmd(), newGuardrailsCmd(), newBenchCmd(), newTokenCmd(), newVersionCmd())
	return root
}
