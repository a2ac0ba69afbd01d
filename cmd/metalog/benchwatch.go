package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/metalog/metalog/bench"
)

func newBenchWatchCmd() *cobra.Command {
	var o bench.WatchOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "N tables without and with W watchers: DDL latency, memory per idle watcher, follower delivery lag, history record size, History and at-epoch read times",
		Long: `Runs, in one sitting, on fresh clusters of real processes (fsync on):
  1. baseline: one client creates N tables one at a time on the leader;
  2. watchers: W watches from now, round-robin over the members (over the
     observers alone with --observers), each on a
     connection of its own unless --streams-per-connection says otherwise
     (member RSS, heap and goroutines before and after opening them, per
     watcher); then the same N tables, timing, for
     the watchers on followers, receive time less the DDL's ack time, and
     checking that every watcher received every table's event once;
  3. the members' peak RSS, disk, and the mean size of a CREATE TABLE's
     history record in schema.db;
  4. with --history-epochs E: E epochs on one member, then History (the
     newest 100) and GetSchema at_epoch (current-100, current-10000) timed
     after the first 1000 epochs and after E.
With --observers O, both the baseline and the watchers phase add O
observers (o1 to oO, members that never vote) once the voters are up, so
that the DDL ratio compares clusters that replicate alike: the voters take
the DDL, the observers the watchers, and the members' CPU with watchers
less without is reported for the voters and the observers apart.
A watcher that missed or repeated an event makes the command fail after
printing the result.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := runLocally(&o.Binary, &o.Progress); err != nil {
				return err
			}
			ctx, stop := interruptible(cmd)
			defer stop()
			r, err := bench.Watch(ctx, o)
			if r == nil {
				return err
			}
			if asJSON {
				if jerr := json.NewEncoder(cmd.OutOrStdout()).Encode(r); jerr != nil {
					return errors.Join(err, jerr)
				}
			} else {
				printWatch(cmd.OutOrStdout(), r)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Nodes, "nodes", 3, "voting members to start")
	f.IntVar(&o.Observers, "observers", 0, "observers to add in both phases, which then take every watcher (0: the watchers on the voters)")
	f.IntVar(&o.Tables, "tables", 10000, "tables to create in each of the baseline and watchers phases")
	f.IntVar(&o.Watchers, "watchers", 1000, "watch streams, round-robin over the members (the observers, if any)")
	f.IntVar(&o.StreamsPerConnection, "streams-per-connection", 1, "watchers of one member sharing a connection (1: each its own; a member takes up to --max-concurrent-requests-per-connection, 64)")
	f.IntVar(&o.HistoryEpochs, "history-epochs", 0, "epochs of the history phase on one member (0: skip it; else at least 1000)")
	f.IntVar(&o.MemberGOMAXPROCS, "member-gomaxprocs", 0, "GOMAXPROCS of every member started (0: the Go runtime's default, all cores)")
	f.StringVar(&o.Dir, "dir", "", "parent of the phases' data dirs (kept); default temp dirs removed at the end of each phase")
	addServeArgFlag(f, &o.ServeArgs)
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

func printWatch(w io.Writer, r *bench.WatchResult) {
	fmt.Fprintf(w, "metalog watch  nodes=%d observers=%d tables=%d watchers=%d target=%s streams/connection=%d connections=%d\n",
		r.Nodes, r.Observers, r.Tables, r.Watchers, r.Target, r.StreamsPerConnection, r.Connections)
	for _, p := range []struct {
		name string
		f    bench.DDLFigures
	}{{"baseline", r.Baseline}, {"with watchers", r.WithWatchers}} {
		fmt.Fprintf(w, "%-18s %.2f s  %.1f ops/s  mean / p50 / p99  %.2f / %.2f / %.2f ms  CPU s: members %s, bench %.1f\n",
			p.name, p.f.WallSeconds, p.f.OpsPerSecond, p.f.MeanMs, p.f.P50Ms, p.f.P99Ms, floatList(p.f.MemberCPUSeconds), p.f.BenchCPUSeconds)
	}
	fmt.Fprintf(w, "ratio mean / p99   %.2f / %.2f\n", r.MeanRatio, r.P99Ratio)
	fmt.Fprintf(w, "watchers' CPU      %.1f s of the members (with watchers less baseline): %.1f µs per event sent, %.1f ms per watcher\n",
		r.WatcherMemberCPUSeconds, r.MemberCPUPerEventUs, r.MemberCPUPerWatcherMs)
	if r.Observers > 0 {
		fmt.Fprintf(w, "  voters / observers %.1f / %.1f s: %.1f / %.1f µs per event sent\n",
			r.VoterCPUSeconds, r.ObserverCPUSeconds, r.VoterCPUPerEventUs, r.ObserverCPUPerEventUs)
	}
	i := r.Idle
	fmt.Fprintf(w, "idle watchers      opened in %.2f s; metalog_watchers %s\n", i.OpenSeconds, intList(i.WatchersPerNode))
	fmt.Fprintf(w, "member RSS         before %s MiB, after %s MiB\n", mibList(i.RSSBeforePerNodeBytes), mibList(i.RSSAfterPerNodeBytes))
	fmt.Fprintf(w, "per idle watcher   %.0f bytes RSS, %.0f bytes heap, %.2f goroutines\n", i.RSSBytesPerWatcher, i.HeapBytesPerWatcher, i.GoroutinesPerWatcher)
	d := r.Delivery
	fmt.Fprintf(w, "%-18s receive-ack over %d pairs (%d watchers; leader %s, at the end %s): min / p50 / p99 / max  %.2f / %.2f / %.2f / %.2f ms\n",
		deliveryLabel(r), d.Pairs, d.FollowerWatchers, r.Leader, r.LeaderAtEnd, d.MinMs, d.P50Ms, d.P99Ms, d.MaxMs)
	fmt.Fprintf(w, "events per watcher %d to %d (want %d); %d watchers mismatched; all delivered %.2f s after the last ack\n",
		d.EventsPerWatcherMin, d.EventsPerWatcherMax, r.Tables, d.Mismatched, d.WaitSeconds)
	for _, m := range d.Mismatches {
		fmt.Fprintf(w, "  mismatch: %s\n", m)
	}
	fmt.Fprintf(w, "events sent        %s (metalog_watch_events_sent_total per member)\n", intList(d.EventsSentPerNode))
	fmt.Fprintf(w, "peak RSS           %.1f MiB (per node: %s)\n", float64(r.PeakRSSBytes)/(1<<20), mibList(r.PeakRSSPerNodeBytes))
	if r.Observers > 0 {
		fmt.Fprintf(w, "  voters / observers %.1f / %.1f MiB\n", float64(r.VoterPeakRSSBytes)/(1<<20), float64(r.ObserverPeakRSSBytes)/(1<<20))
	}
	fmt.Fprintf(w, "data dirs on disk  %.1f MiB\n", float64(r.DiskBytes)/(1<<20))
	fmt.Fprintf(w, "history record     %.0f bytes (mean of %d CREATE TABLE records)\n", r.HistoryRecordBytes, r.HistoryRecords)
	if h := r.History; h != nil {
		fmt.Fprintf(w, "history phase      %d epochs in %.1f s (%.0f epochs/s)\n", h.Epochs, h.LoadSeconds, h.EpochsPerSecond)
		for _, p := range []struct {
			name string
			r    bench.HistoryReads
		}{{"start", h.Start}, {"end", h.End}} {
			fmt.Fprintf(w, "  %-5s epoch %d (oldest kept %d): History newest 100 %.2f ms; GetSchema at -100 %.2f ms", p.name, p.r.Epoch, p.r.OldestEpoch, p.r.NewestMs, p.r.AtMinus100Ms)
			if p.r.AtMinus10000Ms != nil {
				fmt.Fprintf(w, ", at -10000 %.2f ms", *p.r.AtMinus10000Ms)
			}
			fmt.Fprintln(w)
		}
	}
}

// deliveryLabel names the members whose watchers' delivery is timed.
func deliveryLabel(r *bench.WatchResult) string {
	if r.Observers > 0 {
		return "observer delivery"
	}
	return "follower delivery"
}

// intList and floatList print v as mibList does.
func intList(v []int64) string { return listOf(v, func(n int64) string { return fmt.Sprint(n) }) }

func floatList(v []float64) string {
	return listOf(v, func(f float64) string { return fmt.Sprintf("%.1f", f) })
}
