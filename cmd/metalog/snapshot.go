package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/metalog/metalog/api"
	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/internal/durable"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/snapshot"
)

func newSnapshotCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Save a backup of a running cluster, or check one",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newSnapshotSaveCmd(), newSnapshotStatusCmd(), newSnapshotRestoreCmd())
	return cmd
}

func newSnapshotSaveCmd() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "save FILE",
		Short: "Save a consistent backup of the cluster's metadata to FILE",
		Long: `Save a backup of the schema, the guardrail settings, the remembered
request ids and the history of changes kept, as of a linearizable point
(the member answering confirms with the leader that it has applied
everything committed), to FILE in the members' checksummed snapshot
format. It needs the operator role.

The file is written next to FILE under a temporary name, fsynced, checked
(it is read back and its checksum verified) and then renamed to FILE, so
FILE is either the whole backup or left as it was. It prints the epoch and
log index the backup holds.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := saveSnapshot(cmd, &cf, args[0])
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

func newSnapshotStatusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status FILE",
		Short: "Check a backup or snapshot file and print what it holds",
		Long: `Read FILE, verify its checksum, schema digest and history records, and
print what it holds: the epoch, raft log index, keyspaces, tables, types,
indexes, remembered request ids, history records, size and schema digest
(as GetSchema and cluster check show it). A corrupt or truncated file is an
error naming what is wrong. It reads the file only: no server is needed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			st, err := snapshotStatusOf(data)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
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

func newSnapshotRestoreCmd() *cobra.Command {
	var cfg api.Config
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
				return errors.New("snapshot restore needs --data-dir, --name and --initial-cluster")
			}
			initial, err := cfg.InitialMembers()
			if err != nil {
				return err
			}
			data, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			m, err := member.RestoreDataDir(cfg.DataDir, cfg.Name, initial, data)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			peer := ""
			for _, im := range initial {
				if im.Name == cfg.Name {
					peer = im.PeerAddr
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "restored %s into %s: epoch %d, %d keyspaces, %d tables\nstart it with: metalog serve --name %s --data-dir %s --peer-addr %s --initial-cluster %s (and its --grpc-addr and --http-addr)\n",
				args[0], cfg.DataDir, m.Epoch, m.Schema.KeyspaceCount(), m.Schema.TableCount(), cfg.Name, cfg.DataDir, peer, cfg.InitialCluster)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.DataDir, "data-dir", "", "the new member's data dir (new or empty)")
	f.StringVar(&cfg.Name, "name", "", "the new member's name, one of --initial-cluster")
	f.StringVar(&cfg.InitialCluster, "initial-cluster", "", "the new cluster's founding members as name=host:port,...")
	return cmd
}

// snapshotStatus is what a snapshot file holds.
type snapshotStatus struct {
	Epoch     uint64 `json:"epoch"`
	Index     uint64 `json:"index"`
	Keyspaces int    `json:"keyspaces"`
	Tables    int    `json:"tables"`
	// Views counts the materialized views, which Tables leaves out.
	Views   int `json:"views"`
	Types   int `json:"types"`
	Indexes int `json:"indexes"`
	// Functions counts the functions and aggregates.
	Functions  int    `json:"functions"`
	Requests   int    `json:"requests"`
	Guardrails string `json:"guardrails"` // "set" or "defaults"
	// History is how many history records it holds, from HistoryFrom on.
	History     int    `json:"history_records"`
	HistoryFrom uint64 `json:"history_from_epoch,omitempty"`
	Bytes       int    `json:"bytes"`
	ChecksumOK  bool   `json:"checksum_ok"`
	// Digest is the schema's, as GetSchema and cluster check show it.
	Digest string `json:"digest"`
}

// historyFrom says where a backup's history starts, for status.
func historyFrom(st *snapshotStatus) string {
	if st.History == 0 {
		return ""
	}
	return fmt.Sprintf(", epochs %d to %d", st.HistoryFrom, st.Epoch)
}

// snapshotStatusOf decodes data (which checks its checksum and digest).
func snapshotStatusOf(data []byte) (*snapshotStatus, error) {
	c, err := snapshot.Decode(data)
	if err != nil {
		return nil, err
	}
	st := &snapshotStatus{Epoch: c.Epoch, Index: c.Index, Keyspaces: c.Schema.KeyspaceCount(), Tables: c.Schema.TableCount(),
		Views: c.Schema.ViewCount(), Requests: len(c.Requests), Guardrails: "defaults", Bytes: len(data), ChecksumOK: true}
	d := c.Schema.Digest()
	st.Digest = hex.EncodeToString(d[:])
	for _, k := range c.Schema.Keyspaces() {
		st.Types += len(k.UserTypes())
		st.Indexes += len(k.Indexes())
		st.Functions += k.FunctionCount()
	}
	for _, s := range c.Sections {
		switch s.Tag {
		case snapshot.SectionGuardrails:
			st.Guardrails = "set"
		case snapshot.SectionHistory:
			if st.History, st.HistoryFrom, err = metadata.BackupHistory(s.Data, c.Epoch); err != nil {
				return nil, err
			}
		}
	}
	return st, nil
}

// saveSnapshot streams a backup into a temporary file next to path, checks
// it, and renames it to path.
func saveSnapshot(cmd *cobra.Command, cf *clientFlags, path string) (*snapshotStatus, error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("snapshot save: %w", err)
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	defer tmp.Close()
	first, err := unary(cmd, cf, func(ctx context.Context, c *client.Client) (*pb.SaveSnapshotResponse, error) {
		return receiveSnapshot(ctx, c, tmp)
	})
	if err != nil {
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		return nil, fmt.Errorf("snapshot save: fsync %s: %w", tmp.Name(), err)
	}
	data, err := os.ReadFile(tmp.Name())
	if err != nil {
		return nil, fmt.Errorf("snapshot save: %w", err)
	}
	if uint64(len(data)) != first.Size {
		return nil, fmt.Errorf("snapshot save: received %d bytes, the member announced %d", len(data), first.Size)
	}
	st, err := snapshotStatusOf(data)
	if err != nil {
		return nil, fmt.Errorf("snapshot save: the received snapshot does not check out: %w", err)
	}
	if st.Epoch != first.Epoch || st.Index != first.Index {
		return nil, fmt.Errorf("snapshot save: the snapshot holds epoch %d index %d, the member announced epoch %d index %d", st.Epoch, st.Index, first.Epoch, first.Index)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("snapshot save: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, fmt.Errorf("snapshot save: %w", err)
	}
	if err := durable.SyncDir(dir); err != nil {
		return nil, fmt.Errorf("snapshot save: fsync %s: %w", dir, err)
	}
	return st, nil
}

// receiveSnapshot writes a backup stream's bytes to w and returns its
// first message (epoch, index, size).
func receiveSnapshot(ctx context.Context, c *client.Client, w io.Writer) (*pb.SaveSnapshotResponse, error) {
	stream, err := c.SaveSnapshot(ctx, &pb.SaveSnapshotRequest{})
	if err != nil {
		return nil, err
	}
	var first *pb.SaveSnapshotResponse
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			if first == nil {
				return nil, errors.New("snapshot save: the member sent no snapshot")
			}
			return first, nil
		}
		if err != nil {
			return nil, err
		}
		if first == nil {
			first = m
		}
		if _, err := w.Write(m.Data); err != nil {
			return nil, fmt.Errorf("snapshot save: %w", err)
		}
	}
}
