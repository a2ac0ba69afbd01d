package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/metalog/metalog/internal/safetext"
	"github.com/metalog/metalog/member"
)

func newCheckCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check a member's files offline",
	}
	cmd.AddCommand(newCheckDataDirCmd())
	return cmd
}

func newCheckDataDirCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "data-dir DIR",
		Short: "Check a stopped member's data dir offline; exits 1 when anything is damaged",
		Long: `Check the files of a stopped member's data dir without changing any of them:
raft.db (its pages and records), every record of the write-ahead log (wal/),
every snapshot file (snap/: checksum and the metadata in it) and schema.db
(its pages, every value's checksum, every record, the digest its summary
records). Then the schema the store holds at its log index is compared with
the one the newest snapshot at or below that index and the log after it
give, replayed in a temporary directory. It prints one line per file, the
damages and notes, the agreement and a verdict: clean, damaged, or
incomplete when nothing is damaged but the agreement could not be checked
(the store is ahead of the log, or the log is compacted past it with no
snapshot at or below it). It exits 0 only when clean. A running member
holds the files: stop it first. --json prints one JSON object: dir, files,
findings, agreement, verdict.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := member.CheckDataDir(args[0])
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				err = enc.Encode(r)
			} else {
				err = printDataDirReport(cmd.OutOrStdout(), r)
			}
			if err != nil {
				return err
			}
			switch r.Verdict {
			case member.VerdictClean:
				return nil
			case member.VerdictIncomplete:
				return errors.New("the data dir could not be checked in full: " + r.Agreement.Reason)
			}
			return fmt.Errorf("the data dir %s is damaged", args[0])
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

// printDataDirReport prints a line per file, per damage and note, the
// agreement and the verdict.
func printDataDirReport(w io.Writer, r *member.DataDirReport) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, f := range r.Files {
		if f.Status == "ok" {
			fmt.Fprintf(tw, "%s\tOK\t%s\n", safetext.Field(f.File), safetext.Line(f.Summary))
		}
	}
	for _, f := range r.Findings {
		status, text := "NOTE", f.Detail
		if f.Damaged {
			status, text = "DAMAGED", f.Kind+where(f.Where)+": "+f.Detail
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", safetext.Field(f.File), status, safetext.Line(text))
	}
	fmt.Fprintf(tw, "agreement\t%s\t%s\n", agreementStatus(r.Agreement), safetext.Line(agreementText(r.Agreement)))
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "verdict: %s\n", r.Verdict)
	return err
}

func where(w string) string {
	if w == "" {
		return ""
	}
	return " at " + w
}

func agreementStatus(a member.Agreement) string {
	switch {
	case !a.Checked:
		return "NOT CHECKED"
	case a.Agree:
		return "OK"
	}
	return "DIFFERS"
}

func agreementText(a member.Agreement) string {
	from := "the log from its start"
	if a.SnapshotIndex > 0 {
		from = fmt.Sprintf("the snapshot at %d and the log after it", a.SnapshotIndex)
	}
	store := fmt.Sprintf("schema.db at index %d: epoch %d, digest %.16s", a.StoreIndex, a.StoreEpoch, a.StoreDigest)
	if !a.Checked {
		return a.Reason
	}
	return fmt.Sprintf("%s; %s: epoch %d, digest %.16s", store, from, a.LogEpoch, a.LogDigest)
}
