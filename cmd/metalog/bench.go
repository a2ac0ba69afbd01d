package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/metalog/metalog/bench"
)

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure metalog on a local cluster of real processes (compare with the etcd peer benchmark: see BENCHMARKS.md)",
	}
	cmd.AddCommand(newBenchTablesCmd(),
		newRecoveryCmd("restart", "Time from starting a member holding N tables to ready", bench.Restart),
		newRecoveryCmd("catchup", "A follower down during N DDLs: time to catch up and entries/s", bench.Catchup),
		newRebuildCmd(),
		newBenchWatchCmd())
	return cmd
}

func newRecoveryCmd(name, short string, run func(context.Context, bench.RecoveryOptions) (*bench.RecoveryResult, error)) *cobra.Command {
	var o bench.RecoveryOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   name,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := runLocally(&o.Binary, &o.Progress); err != nil {
				return err
			}
			ctx, stop := interruptible(cmd)
			defer stop()
			r, err := run(ctx, o)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(r)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s  tables=%d  %.2f s", r.Benchmark, r.Tables, r.Seconds)
			if r.EntriesPerSecond > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "  %d entries replayed in %.2f s: %.0f entries/s", r.Entries, r.ReplaySeconds, r.EntriesPerSecond)
			}
			if r.CPUSeconds > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "  member CPU %.2f s (%.1f µs an entry)", r.CPUSeconds, r.CPUPerEntryMicros)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "  data dir %.1f MiB\n", float64(r.DiskBytes)/(1<<20))
			return nil
		},
	}
	cmd.Flags().IntVar(&o.Tables, "tables", 10000, "tables")
	addServeArgFlag(cmd.Flags(), &o.ServeArgs)
	if name == "restart" {
		cmd.Flags().BoolVar(&o.Kill, "kill", false, "stop with SIGKILL instead of a drain")
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

func newBenchTablesCmd() *cobra.Command {
	var o bench.TablesOptions
	var creds clientFlags
	var endpoints string
	var asJSON bool
	var window string
	cmd := &cobra.Command{
		Use:   "tables",
		Short: "Create N tables one statement at a time and report latency per bucket, percentiles, RSS and disk",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			secured := creds.cacert != "" || creds.cert != "" || creds.key != "" || creds.token != ""
			if endpoints != "" {
				o.Endpoints = strings.Split(endpoints, ",")
				var err error
				if o.TLS, o.Token, err = creds.credentials(); err != nil {
					return err
				}
			} else {
				if secured {
					return errors.New("--cacert, --cert, --key and --token apply to --endpoints: a cluster the benchmark starts is not secured")
				}
				exe, err := os.Executable()
				if err != nil {
					return err
				}
				o.Binary = exe
			}
			if window != "" {
				o.ServeArgs = append(o.ServeArgs, "--schema-flush-coalescing-window", window)
			}
			if isTerminal(os.Stderr) {
				o.Progress = os.Stderr
			}
			ctx, stop := interruptible(cmd)
			defer stop()
			r, err := bench.Tables(ctx, o)
			if err != nil {
				return flagError(err)
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(r)
			}
			printTables(cmd.OutOrStdout(), r)
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Nodes, "nodes", 3, "members to start")
	f.IntVar(&o.Tables, "tables", 10000, "tables to create")
	f.IntVar(&o.Clients, "clients", 1, "concurrent clients (1 = sequential)")
	f.IntVar(&o.Buckets, "buckets", 10, "consecutive slices of the ops to report mean latency for")
	f.StringVar(&o.Statement, "statement", "", "DDL with %d for the table number (default CREATE TABLE ks.t_%d (id int PRIMARY KEY, v text))")
	f.StringVar(&o.Dir, "dir", "", "parent of the members' data dirs (kept); default a temp dir removed at the end")
	f.StringVar(&endpoints, "endpoints", "", "target a running cluster instead of starting one")
	creds.registerCredentials(cmd)
	f.StringVar(&o.Target, "target", bench.TargetAll, "members the clients send to: all (round-robin from the first, as the etcd peer does), leader, or followers")
	f.StringVar(&o.Protocol, "protocol", bench.ProtocolGRPC, "how the clients send the DDL: grpc (metalog's API) or cql (Cassandra's native protocol through the gocql driver; every member started gets a CQL listener)")
	f.BoolVar(&o.NoSchemaAgreement, "no-schema-agreement", false, "with --protocol cql: time the DDL alone, without the driver's wait for every member to report the same schema_version after it (two SELECTs, and a 200 ms sleep while they differ), as over gRPC, whose Execute answers once the member that took it has applied it")
	f.StringVar(&window, "schema-flush-coalescing-window", "", "passed to every serve")
	f.IntVar(&o.MemberGOMAXPROCS, "member-gomaxprocs", 0, "GOMAXPROCS of every member started (0: the Go runtime's default, all cores)")
	addServeArgFlag(f, &o.ServeArgs)
	f.BoolVar(&asJSON, "json", false, "print one JSON object (the etcd peer's field names)")
	return cmd
}

func printTables(w io.Writer, r *bench.Result) {
	fmt.Fprintf(w, "metalog  nodes=%d tables=%d clients=%d target=%s protocol=%s%s\n", r.Nodes, r.Tables, r.Clients, r.Target, r.Protocol, agreementNote(r))
	fmt.Fprintf(w, "wall               %.2f s\n", r.WallSeconds)
	fmt.Fprintf(w, "throughput         %.1f ops/s\n", r.OpsPerSecond)
	fmt.Fprintf(w, "latency p50 / p99  %.2f / %.2f ms\n", r.P50Ms, r.P99Ms)
	fmt.Fprintf(w, "last/first bucket  %.2f\n", r.LastFirstRatio)
	fmt.Fprintf(w, "peak RSS           %.1f MiB (per node: %s)\n", float64(r.PeakRSSBytes)/(1<<20), mibList(r.PeakRSSPerNodeBytes))
	fmt.Fprintf(w, "data dirs on disk  %.1f MiB\n", float64(r.DiskBytes)/(1<<20))
	printServerLoad(w, r.ServerLoad)
	fmt.Fprintln(w, "bucket  ops          mean ms")
	n := r.Tables
	for b, m := range r.BucketMeanMs {
		lo, hi := b*n/len(r.BucketMeanMs)+1, (b+1)*n/len(r.BucketMeanMs)
		fmt.Fprintf(w, "%-7d %-12s %.2f\n", b+1, fmt.Sprintf("%d-%d", lo, hi), m)
	}
}

// printServerLoad prints the members' CPU time and context switches of
// the table phase, or why they were not measured.
func printServerLoad(w io.Writer, l bench.ServerLoad) {
	if l.ServerLoadNote != "" {
		fmt.Fprintf(w, "server CPU         %s\n", l.ServerLoadNote)
		return
	}
	perNode := listOf(l.ServerCPUPerNodeSeconds, func(s float64) string { return fmt.Sprintf("%.2f", s) })
	fmt.Fprintf(w, "server CPU         %.2f s (per node: %s; leader n%d)\n", l.ServerCPUSeconds, perNode, l.ServerCPULeader+1)
	fmt.Fprintf(w, "CPU per DDL        %.3f ms\n", l.CPUPerDDLMs)
	perNode = listOf(l.CtxSwitchesPerNodePerDDL, func(n float64) string { return fmt.Sprintf("%.1f", n) })
	fmt.Fprintf(w, "ctx switches/DDL   %.1f (per node: %s)\n", l.CtxSwitchesPerDDL, perNode)
}

func mibList(v []int64) string {
	return listOf(v, func(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) })
}

// listOf formats each of v and joins them with ", ".
func listOf[T any](v []T, format func(T) string) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = format(x)
	}
	return strings.Join(parts, ", ")
}

// runLocally points a benchmark that starts its own members at this
// executable, and its progress line at stderr when that is a terminal.
func runLocally(binary *string, progress *io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	*binary = exe
	if isTerminal(os.Stderr) {
		*progress = os.Stderr
	}
	return nil
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func newRebuildCmd() *cobra.Command {
	var o bench.RecoveryOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "rebuild",
		Short: "A fresh replica rebuilt through the snapshot, against a plain copy of the snapshot file",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := runLocally(&o.Binary, &o.Progress); err != nil {
				return err
			}
			ctx, stop := interruptible(cmd)
			defer stop()
			r, err := bench.Rebuild(ctx, o)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(r)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "rebuild  tables=%d  snapshot %.1f MiB  rebuild %.2f s  plain copy %.3f s  ratio %.1f\n",
				r.Tables, float64(r.SnapshotBytes)/(1<<20), r.RebuildSecs, r.CopySecs, r.Ratio)
			return nil
		},
	}
	cmd.Flags().IntVar(&o.Tables, "tables", 100000, "tables in the cluster")
	addServeArgFlag(cmd.Flags(), &o.ServeArgs)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

// addServeArgFlag adds --serve-arg, extra arguments for every `metalog
// serve` the benchmark starts.
func addServeArgFlag(f *pflag.FlagSet, args *[]string) {
	f.StringArrayVar(args, "serve-arg", nil, "extra argument for every serve the benchmark starts, e.g. --serve-arg=--snapshot-interval-entries=100000 (repeatable)")
}

// interruptible is the context of a command that runs until done or
// interrupted: SIGINT or SIGTERM ends it, so that what it started (a
// benchmark's members, a watch stream) is stopped and cleaned up rather
// than left running.
func interruptible(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
}

// agreementNote is what the first line of a tables run says of the CQL
// driver's schema agreement: nothing when it waited for it, as it does by
// default.
func agreementNote(r *bench.Result) string {
	if r.NoSchemaAgreement {
		return " (no schema agreement)"
	}
	return ""
}
