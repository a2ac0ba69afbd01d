package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/metalog/metalog/access"
	"github.com/metalog/metalog/api"
)

// newTokenCmd is `metalog token new|hash`: helpers for auth_token_file, so
// that operators never store a token in plaintext.
func newTokenCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Make bearer tokens and their hashes for auth_token_file",
	}
	var name, roles string
	newCmd := &cobra.Command{
		Use:   "new",
		Short: "Print a new random token on stdout, and its auth_token_file line on stderr",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The name and roles are checked as the server reads the
			// file, so that the line printed is one it takes.
			if err := access.CheckName(name); err != nil {
				return fmt.Errorf("--name: %w; no token was made", err)
			}
			grants, err := access.ParseGrants(strings.Split(roles, ","))
			if err != nil {
				return fmt.Errorf("--roles %q: %w", roles, err)
			}
			tok := api.NewToken()
			fmt.Fprintln(cmd.OutOrStdout(), tok)
			fmt.Fprintf(cmd.ErrOrStderr(), "# add to auth_token_file:\n%s %s %s\n", name, api.HashToken(tok), grants)
			return nil
		},
	}
	newCmd.Flags().StringVar(&name, "name", "client", "name of the token's holder (in logs and errors): up to 64 bytes, without ',', '=', whitespace, control or bidirectional characters")
	newCmd.Flags().StringVar(&roles, "roles", "reader", "roles, comma separated: reader, ddl, operator, each for every keyspace or scoped with @keyspace or @prefix* (ddl@shop, ddl@tenant_*)")
	hashCmd := &cobra.Command{
		Use:   "hash [TOKEN]",
		Short: "Print the SHA-256 hash of a token (read from stdin without an argument)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var tok string
			if len(args) == 1 {
				tok = args[0]
			} else {
				line, err := bufio.NewReader(os.Stdin).ReadString('\n')
				if err != nil && line == "" {
					return fmt.Errorf("reading the token from stdin: %w", err)
				}
				tok = strings.TrimSpace(line)
			}
			if tok == "" {
				return errors.New("empty token")
			}
			fmt.Fprintln(cmd.OutOrStdout(), api.HashToken(tok))
			return nil
		},
	}
	cmd.AddCommand(newCmd, hashCmd)
	return cmd
}
