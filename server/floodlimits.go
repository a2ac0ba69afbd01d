package server

import (
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
)

// Connection settings not worth an operator's setting.
const (
	// autoMaxConnections is the most connections per client listener
	// that the default of max_connections gives, whatever the open-file
	// limit.
	autoMaxConnections = 10000
	// keepaliveTime is how long a gRPC connection may stay silent before
	// the server pings it: a client that died with a watch open (no FIN
	// ever came) is found and its stream freed.
	keepaliveTime = time.Minute
	// keepaliveTimeout is how long the server waits for a ping's answer
	// before it closes the connection.
	keepaliveTimeout = 20 * time.Second
	// minPingInterval is the most often a client may ping: a client
	// pinging more often is sent a GOAWAY (too_many_pings), so that pings
	// cannot be a flood of their own. Clients of grpc-go, Java and C
	// default to no pings or to pings far apart.
	minPingInterval = 10 * time.Second
)

// validateFloodLimits checks the stream limits, the connection caps and
// the timeouts.
func (c *Config) validateFloodLimits() error {
	if c.MaxWatchStreams < 1 {
		return fmt.Errorf("config: max_watch_streams must be at least 1, got %d", c.MaxWatchStreams)
	}
	if c.MaxWatchStreamsPerIdentity < 1 {
		return fmt.Errorf("config: max_watch_streams_per_identity must be at least 1, got %d", c.MaxWatchStreamsPerIdentity)
	}
	if c.MaxConnections < 0 {
		return fmt.Errorf("config: max_connections must be at least 1, or 0 for a quarter of the open-file limit, got %d", c.MaxConnections)
	}
	if c.MaxConnectionsPerSource < 0 {
		return fmt.Errorf("config: max_connections_per_source must be at least 1, or 0 for half of max_connections, got %d", c.MaxConnectionsPerSource)
	}
	if c.IdleTimeout <= 0 {
		return fmt.Errorf("config: idle_timeout (--idle-timeout) must be positive, got %v", time.Duration(c.IdleTimeout))
	}
	if c.RequestReadTimeout <= 0 {
		return fmt.Errorf("config: request_read_timeout (--request-read-timeout) must be positive, got %v", time.Duration(c.RequestReadTimeout))
	}
	return nil
}

// connectionCaps returns max_connections and max_connections_per_source,
// their defaults worked out from nofile, the open-file limit (0: unknown).
func (c *Config) connectionCaps(nofile uint64) (maxConns, perSource int) {
	maxConns = c.MaxConnections
	if maxConns == 0 {
		maxConns = autoMaxConnections
		if nofile > 0 && nofile/4 < autoMaxConnections {
			maxConns = int(max(1, nofile/4))
		}
	}
	perSource = c.MaxConnectionsPerSource
	if perSource == 0 {
		perSource = max(1, maxConns/2)
	}
	return maxConns, perSource
}

// connectionOptions are the client gRPC server's bounds on connections:
// the handshake within request_read_timeout, a GOAWAY after idle_timeout
// without a call in flight, pings of silent connections, and no client
// pings more often than minPingInterval.
func (c *Config) connectionOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ConnectionTimeout(time.Duration(c.RequestReadTimeout)),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionIdle: time.Duration(c.IdleTimeout),
			Time:              keepaliveTime,
			Timeout:           keepaliveTimeout,
		}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: minPingInterval, PermitWithoutStream: true}),
	}
}
