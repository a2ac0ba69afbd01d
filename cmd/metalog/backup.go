package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/server"
)

// newBackupCmd is `metalog backup`: save, status and restore.
func newBackupCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "backup",
		Short: "Save a backup of a running cluster, check one, or restore one into a new cluster",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newBackupSaveCmd(), newBackupStatusCmd(), newBackupRestoreCmd())
	return cmd
}

// newSnapshotCmd is `metalog snapshot`, the deprecated older name of
// `metalog backup`: the same subcommands, each saying so when it runs.
func newSnapshotCmd() *cobra.Command {
	cmd := newBackupCmd()
	cmd.Use = "snapshot"
	cmd.Short = `Deprecated: use "metalog backup"`
	cmd.Hidden = true
	for _, sub := range cmd.Commands() {
		sub.Deprecated = fmt.Sprintf(`use "metalog backup %s"`, sub.Name())
	}
	return cmd
}

func newBackupSaveCmd() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "save FILE",
		Short: "Save a consistent backup of the cluster's metadata to FILE",
		Long: `Save a backup of the schema, the guardrail settings, the remembered
request ids and the history of changes kept, as of a linearizable point
(the member answering confirms with the leader that it has applied
everything committed), to FILE in the members' checksummed backup
format. It needs the operator role.

The file is written next to FILE under a temporary name, fsynced, checked
(it is read back and its checksum verified) and then renamed to FILE, so
FILE is either the whole backup or left as it was. It prints the epoch and
log index the backup holds.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := saveBackup(cmd, &cf, args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "saved %s: epoch %d, index %d, %d keyspaces, %d tables, %d bytes\n",
				args[0], st.Epoch, st.Index, st.Keyspaces, st.Tables, st.Bytes)
			return nil
		},
	}
	cf.register(cmd)
	return cmd
}

func newBackupStatusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status FILE",
		Short: "Check a backup file and print what it holds",
		Long: `Read FILE, verify its checksum, schema digest and history records, and
print what it holds: the epoch, raft log index, keyspaces, tables, types,
indexes, remembered request ids, history records, size and schema digest
(as GetSchema and cluster check show it). A corrupt or truncated file is an
error naming what is wrong. It reads the file only: no server is needed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := member.VerifyBackupFile(args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(st)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "epoch      %d\nindex      %d\nkeyspaces  %d\ntables     %d\nviews      %d\ntypes      %d\nindexes    %d\nfunctions  %d\nrequests   %d\nguardrails %s\nhistory    %d records%s\nbytes      %d\ndigest     %s\nchecksum   ok\n",
				st.Epoch, st.Index, st.Keyspaces, st.Tables, st.Views, st.Types, st.Indexes, st.Functions, st.Requests, st.Guardrails, st.History, historyFrom(st), st.Bytes, st.Digest)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

func newBackupRestoreCmd() *cobra.Command {
	var cfg server.Config
	cmd := &cobra.Command{
		Use:   "restore FILE --data-dir DIR --name NAME --initial-cluster n1=H:P,...",
		Short: "Make the data dir of a new cluster's member from a backup (offline)",
		Long: `Make DIR the data dir of member NAME of a new cluster founded by
--initial-cluster, holding the backup's schema, guardrail settings and
remembered request ids at its epoch. Run it once for each founding member,
from the same backup, then start each with serve and the same --name,
--data-dir and --initial-cluster. New DDL goes on from the epoch after the
backup's. The backup's history records come along: history and
--at-epoch reach back as far as they did on the cluster it came from.

The new cluster's id is made from its founding members and the backup, so
its members and those of the cluster the backup came from refuse each
other's raft traffic, even on the same addresses. DIR must not hold a
member's files yet. No server is needed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cfg.DataDir == "" || cfg.Name == "" || cfg.InitialCluster == "" {
				return errors.New("backup restore needs --data-dir, --name and --initial-cluster")
			}
			initial, err := cfg.InitialMembers()
			if err != nil {
				return err
			}
			st, err := member.RestoreBackupFile(args[0], cfg.DataDir, cfg.Name, initial)
			if err != nil {
				return err
			}
			peer := ""
			for _, im := range initial {
				if im.Name == cfg.Name {
					peer = im.PeerAddr
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "restored %s into %s: epoch %d, %d keyspaces, %d tables\nstart it with: metalog serve --name %s --data-dir %s --peer-addr %s --initial-cluster %s (and its --grpc-addr, --http-addr and --cql-addr)\n",
				args[0], cfg.DataDir, st.Epoch, st.Keyspaces, st.Tables, cfg.Name, cfg.DataDir, peer, cfg.InitialCluster)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.DataDir, "data-dir", "", "the new member's data dir (new or empty)")
	f.StringVar(&cfg.Name, "name", "", "the new member's name, one of --initial-cluster")
	f.StringVar(&cfg.InitialCluster, "initial-cluster", "", "the new cluster's founding members as name=host:port,...")
	return cmd
}

// historyFrom says where a backup's history starts, for status.
func historyFrom(st *member.BackupStatus) string {
	if st.History == 0 {
		return ""
	}
	return fmt.Sprintf(", epochs %d to %d", st.HistoryFrom, st.Epoch)
}

// saveBackup saves a backup into path through client.SaveBackupFile,
// checked with member.VerifyBackup, and returns what it holds.
func saveBackup(cmd *cobra.Command, cf *clientFlags, path string) (*member.BackupStatus, error) {
	var st *member.BackupStatus
	verify := func(data []byte) (uint64, uint64, error) {
		var err error
		if st, err = member.VerifyBackup(data); err != nil {
			return 0, 0, err
		}
		return st.Epoch, st.Index, nil
	}
	_, err := unary(cmd, cf, func(ctx context.Context, c *client.Client) (*client.BackupInfo, error) {
		return client.SaveBackupFile(ctx, c, path, verify)
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}
