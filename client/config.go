package client

import (
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/metalog/metalog/internal/loopback"
)

// Defaults of Config.
const (
	// DefaultTimeout is Config.Timeout when it is zero.
	DefaultTimeout = 15 * time.Second
	// DefaultConnectTimeout is Config.ConnectTimeout when it is zero.
	DefaultConnectTimeout = time.Second
	// DefaultMaxResponseBytes is Config.MaxResponseBytes when it is zero:
	// a whole schema of 100,000 tables is about 10 MB of protobuf.
	DefaultMaxResponseBytes = 1 << 30
	// DefaultWatchIdleTimeout is Config.WatchIdleTimeout's default: six
	// of the members' default progress intervals.
	DefaultWatchIdleTimeout = 30 * time.Second
)

// Config configures a Client. Only Endpoints is required.
type Config struct {
	// Endpoints are the gRPC addresses (host:port) of metalog members,
	// tried in this order (see Client). At least one is required.
	Endpoints []string
	// ReadEndpoints, if not empty, are the gRPC addresses (host:port) of
	// the members that serve reads and watches, observers typically: the
	// reads (GetSchema, GetKeyspace, GetTable, Describe, GetGuardrails,
	// History, Plan, GetRequestOutcome, Backup) and Watch and Follow go
	// to them, tried in turn as Endpoints are for a call, and fall back
	// to Endpoints, in the same round, when none of them answers (each
	// unreachable or Unavailable); every change (Execute, SetGuardrails,
	// AddMember, RemoveMember) and the cluster's administration
	// (ListMembers, CheckCluster, RepairMember) go to Endpoints only. A
	// read keeps its consistency wherever it goes: a linearizable read on
	// an observer is confirmed with the leader by the observer. Empty:
	// everything goes to Endpoints. See Client.
	ReadEndpoints []string
	// TLS, if not nil, secures every connection with this configuration
	// (its ServerName, when empty, is each endpoint's host). Nil means
	// plaintext.
	TLS *tls.Config
	// Token, if not empty, is a bearer token sent with every call as
	// "authorization: Bearer TOKEN". New refuses a token without TLS
	// unless every endpoint is loopback (a *PlaintextTokenError).
	Token string
	// Timeout is the deadline of a call whose context has none, its
	// retries on other endpoints included. Default 15s (DefaultTimeout).
	Timeout time.Duration
	// ConnectTimeout bounds how long a call waits for a connection to one
	// endpoint: a connection (TCP, TLS and HTTP/2 handshakes) not made
	// within it fails, and the call moves on to the next endpoint. It is
	// also how long a call keeps trying an endpoint that refuses
	// connections (nothing listens there: a member restarting gets that
	// long to be back) before it leaves it out. Default 1s
	// (DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// MaxResponseBytes is the largest answer accepted, in bytes. Default
	// 1 GiB (DefaultMaxResponseBytes).
	MaxResponseBytes int
	// WatchIdleTimeout is how long a watch waits for a message from its
	// member before it takes the member for lost and goes on on another
	// one: members send a progress message every watch_progress_interval
	// (5s by default) while nothing changes, so only a member cut off
	// without closing the connection stays silent that long. Keep it well
	// above the members' watch_progress_interval. Default 30s
	// (DefaultWatchIdleTimeout).
	WatchIdleTimeout time.Duration
}

// PlaintextTokenError is returned by New when Config.Token is set, TLS is
// not, and an endpoint is not loopback: the token would cross the network
// readable by anyone on the way.
type PlaintextTokenError struct {
	// Endpoint is the first endpoint that is not loopback.
	Endpoint string
}

func (e *PlaintextTokenError) Error() string {
	return fmt.Sprintf("client: Token: refusing to send a bearer token in plaintext to %s; set TLS or use a loopback endpoint", e.Endpoint)
}

// validate fills in the defaults and checks the fields. The Endpoints
// and ReadEndpoints slices are copied, so that the caller may reuse its
// own.
func (c *Config) validate() error {
	if len(c.Endpoints) == 0 {
		return errors.New("client: Endpoints: none given")
	}
	c.Endpoints = slices.Clone(c.Endpoints)
	for i, ep := range c.Endpoints {
		if ep == "" {
			return fmt.Errorf("client: Endpoints[%d] is empty", i)
		}
	}
	c.ReadEndpoints = slices.Clone(c.ReadEndpoints)
	for i, ep := range c.ReadEndpoints {
		if ep == "" {
			return fmt.Errorf("client: ReadEndpoints[%d] is empty", i)
		}
	}
	if c.Timeout < 0 {
		return fmt.Errorf("client: Timeout %v: want 0 (the default, %v) or more", c.Timeout, DefaultTimeout)
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.ConnectTimeout < 0 {
		return fmt.Errorf("client: ConnectTimeout %v: want 0 (the default, %v) or more", c.ConnectTimeout, DefaultConnectTimeout)
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.MaxResponseBytes < 0 {
		return fmt.Errorf("client: MaxResponseBytes %d: want 0 (the default, %d) or more", c.MaxResponseBytes, DefaultMaxResponseBytes)
	}
	if c.MaxResponseBytes == 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if c.WatchIdleTimeout < 0 {
		return fmt.Errorf("client: WatchIdleTimeout %v: want 0 (the default, %v) or more", c.WatchIdleTimeout, DefaultWatchIdleTimeout)
	}
	if c.WatchIdleTimeout == 0 {
		c.WatchIdleTimeout = DefaultWatchIdleTimeout
	}
	if c.Token != "" && c.TLS == nil {
		for _, ep := range slices.Concat(c.Endpoints, c.ReadEndpoints) {
			if !loopback.Is(ep) {
				return &PlaintextTokenError{Endpoint: ep}
			}
		}
	}
	return nil
}
