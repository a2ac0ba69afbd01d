package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/metalog/metalog/internal/buildinfo"
)

// versionLine is what `metalog version` and `metalog --version` print.
func versionLine() string { return "metalog " + buildinfo.Read().String() + "\n" }

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the commit and the Go version of this binary",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), versionLine())
			return err
		},
	}
}
