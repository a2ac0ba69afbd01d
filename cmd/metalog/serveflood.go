package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/metalog/metalog/server"
)

// registerFloodFlags adds the flags of what a client may hold open on a
// member: streams, connections, idle and slow ones (same names as the
// config keys, with dashes).
func registerFloodFlags(cmd *cobra.Command, cfg *server.Config) {
	f := cmd.Flags()
	f.IntVar(&cfg.MaxWatchStreams, "max-watch-streams", cfg.MaxWatchStreams, "most watch streams and backup downloads open on this member at once; one more is refused with Unavailable (HTTP 503)")
	f.IntVar(&cfg.MaxWatchStreamsPerIdentity, "max-watch-streams-per-identity", cfg.MaxWatchStreamsPerIdentity, "most watch streams and backup downloads one identity may have open on this member; one more is refused with ResourceExhausted (HTTP 429)")
	f.IntVar(&cfg.MaxConnections, "max-connections", cfg.MaxConnections, "most connections each client listener (gRPC, HTTP) holds open; 0: a quarter of the open-file limit, at most 10000")
	f.IntVar(&cfg.MaxConnectionsPerSource, "max-connections-per-source", cfg.MaxConnectionsPerSource, "most connections each client listener holds open from one IP address; 0: half of --max-connections")
	f.DurationVar((*time.Duration)(&cfg.IdleTimeout), "idle-timeout", time.Duration(cfg.IdleTimeout), "close client connections (HTTP keep-alive, HTTP/2, gRPC) with no request in flight for this long")
	f.DurationVar((*time.Duration)(&cfg.RequestReadTimeout), "request-read-timeout", time.Duration(cfg.RequestReadTimeout), "how long a client may take to send a request's headers, then its body, or a gRPC connection's handshake")
}
