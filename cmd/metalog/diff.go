package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/internal/safetext"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/plan"
)

func newDiffCmd() *cobra.Command {
	var cf clientFlags
	var files []string
	var fromEpoch, toEpoch uint64
	cmd := &cobra.Command{
		Use:   "diff (--from-epoch A [--to-epoch B] | -f old.cql -f new.cql) [keyspace ...]",
		Short: "Print the DDL that turns one schema into another: two epochs of the cluster, or two files",
		Long: `Print the DDL that turns the schema at epoch A into the schema at epoch B
(default: the current one), as the members' history rebuilds them, or the
schema old.cql describes into the one new.cql describes, without a server.
The diff is complete: whatever the second side lacks is dropped, columns
included, and a change Cassandra cannot make in place is a DROP and a
CREATE. Keyspaces named limit it to them, and it says nothing of the
others.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			from, to, err := diffSides(cmd, &cf, files, fromEpoch, toEpoch)
			if err != nil {
				return err
			}
			p, err := plan.Diff(from, to, plan.Options{Keyspaces: args, Complete: true, AllowRecreate: true})
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if len(p.Statements) == 0 {
				fmt.Fprintln(w, "-- no difference")
				return nil
			}
			for _, warn := range p.Warnings {
				fmt.Fprintf(w, "-- warning: %s\n", safetext.Line(warn))
			}
			for _, note := range p.Notes {
				fmt.Fprintf(w, "-- note: %s\n", safetext.Line(note))
			}
			stmts := make([]string, len(p.Statements))
			for i, st := range p.Statements {
				stmts[i] = st.CQL
			}
			fmt.Fprint(w, escapedCQL(member.JoinStatements(stmts)+"\n", ""))
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().StringArrayVarP(&files, "file", "f", nil, "a schema file; give two, old then new (no server needed)")
	cmd.Flags().Uint64Var(&fromEpoch, "from-epoch", 0, "the epoch to diff from")
	cmd.Flags().Uint64Var(&toEpoch, "to-epoch", 0, "the epoch to diff to (default: the current schema)")
	return cmd
}

// diffSides loads the two schemas of a diff: two files, or the cluster's
// schema at two epochs.
func diffSides(cmd *cobra.Command, cf *clientFlags, files []string, fromEpoch, toEpoch uint64) (from, to schema.Schema, err error) {
	epochs := cmd.Flags().Changed("from-epoch") || cmd.Flags().Changed("to-epoch")
	switch {
	case len(files) > 0 && epochs:
		return from, to, errors.New("give two files (-f old.cql -f new.cql) or epochs (--from-epoch A --to-epoch B), not both")
	case len(files) > 0:
		if len(files) != 2 {
			return from, to, fmt.Errorf("give exactly two files, old then new (got %d)", len(files))
		}
		if from, err = loadSchemaFile(files[0]); err != nil {
			return from, to, err
		}
		to, err = loadSchemaFile(files[1])
		return from, to, err
	case !cmd.Flags().Changed("from-epoch"):
		return from, to, errors.New("nothing to diff: give --from-epoch A [--to-epoch B], or -f old.cql -f new.cql")
	}
	var toAt *uint64
	if cmd.Flags().Changed("to-epoch") {
		toAt = &toEpoch
	}
	texts, err := unary(cmd, cf, func(ctx context.Context, c *client.Client) ([2]string, error) {
		var t [2]string
		var err error
		if t[0], err = c.Describe(ctx, "", "", &client.DescribeOptions{AtEpoch: &fromEpoch}); err != nil {
			return t, err
		}
		t[1], err = c.Describe(ctx, "", "", &client.DescribeOptions{AtEpoch: toAt, Consistency: "linearizable"})
		return t, err
	})
	if err != nil {
		return from, to, err
	}
	if from, err = loadDescribed(fmt.Sprintf("epoch %d", fromEpoch), texts[0]); err != nil {
		return from, to, err
	}
	to, err = loadDescribed("the second epoch", texts[1])
	return from, to, err
}

// loadSchemaFile loads the schema a CQL file describes.
func loadSchemaFile(path string) (schema.Schema, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return schema.Schema{}, err
	}
	if err := checkUTF8(path, string(b)); err != nil {
		return schema.Schema{}, err
	}
	return loadDescribed(path, string(b))
}

// loadDescribed loads the schema text describes, naming where it came
// from in an error.
func loadDescribed(where, text string) (schema.Schema, error) {
	s, err := plan.Load(text)
	if err != nil {
		return s, fmt.Errorf("%s: %w", where, err)
	}
	return s, nil
}
