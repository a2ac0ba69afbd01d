package server

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/metalog/metalog/member"
)

// The peer port trusts members only (member.peerTrust, raftlog.PeerGate):
// with authentication on, Start refuses to start without peer mutual TLS
// unless insecure_peer says to (validatePeerTrust). A joining member's
// peer certificate is accepted on the client port for ListMembers alone
// (package api, peerjoin.go).

// errInsecurePeer is the refusal to start with authentication on and a
// peer port without mutual TLS.
var errInsecurePeer = errors.New("config: authentication is on, but the peer port has no mutual TLS")

// insecurePeer reports whether the peer port has no TLS while clients
// must authenticate, as insecure_peer allows.
func (c *Config) insecurePeer() bool {
	return c.authEnabled() && !c.peerTLS() && c.InsecurePeer
}

// validatePeerTrust refuses authentication without peer mutual TLS,
// unless insecure_peer is set: anyone who could connect to the peer port
// could act as a member, past every check of the client port.
func (c *Config) validatePeerTrust() error {
	if !c.authEnabled() || c.peerTLS() || c.InsecurePeer {
		return nil
	}
	return fmt.Errorf("%w (peer_addr %s): anyone who can connect to it can act as a member, applying schema changes past authentication, roles and limits, "+
		"reading every keyspace's history and disrupting the cluster; set peer_cert_file, peer_key_file and peer_ca_file (--peer-cert-file, --peer-key-file, --peer-ca-file), "+
		"or pass --insecure-peer (insecure_peer: true) to run so anyway", errInsecurePeer, c.PeerAddr)
}

// logInsecurePeer says at start-up, at WARN, that the peer port has no TLS
// while clients must authenticate.
func logInsecurePeer(cfg *Config, logger *slog.Logger) {
	if cfg.insecurePeer() {
		logger.Warn(member.InsecurePeerWarning, "peer_addr", cfg.PeerAddr)
	}
}
