package server

import (
	"errors"
	"log/slog"

	"go.yaml.in/yaml/v3"
)

// The CQL listener has no authentication yet, while it is on by default.
// What follows keeps the two apart while authentication is on: an
// address the operator chose is refused, the default one is left off.
// It goes once the CQL listener authenticates its clients.

// errCQLUnderAuth refuses a cql_addr set while authentication is on.
var errCQLUnderAuth = errors.New("config: cql_addr (--cql-addr) is set while authentication is on (auth_token_file or client_ca_file): " +
	"the CQL listener has no authentication yet, and its clients could change the schema as anyone; set cql_addr to \"\" (--cql-addr '')")

// SetCQLAddr sets CQLAddr as the operator's choice, as a config file's
// cql_addr or the --cql-addr flag does: with authentication on, such an
// address is refused rather than left off as the default is.
func (c *Config) SetCQLAddr(addr string) {
	c.CQLAddr, c.cqlAddrDefault = addr, false
}

// noteCQLAddrKey marks CQLAddr as the operator's choice when the config
// file doc (as LoadConfigFile parsed it) has the cql_addr key.
func (c *Config) noteCQLAddrKey(doc *yaml.Node) {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "cql_addr" {
			c.cqlAddrDefault = false
		}
	}
}

// cqlOffUnderAuth decides what becomes of the CQL listener while
// authentication is on: off (true) when cql_addr is the default, which
// Start then leaves off with a warning; errCQLUnderAuth when the operator
// set it (a config file, a flag, SetCQLAddr, or any other value). With
// authentication off or cql_addr empty, neither.
func (c *Config) cqlOffUnderAuth() (off bool, err error) {
	if c.CQLAddr == "" || !c.authEnabled() {
		return false, nil
	}
	if c.cqlAddrDefault && c.CQLAddr == DefaultCQLAddr {
		return true, nil
	}
	return false, errCQLUnderAuth
}

// leaveDefaultCQLOff turns the CQL listener off, with one warning saying
// why, when cqlOffUnderAuth says so.
func (c *Config) leaveDefaultCQLOff(logger *slog.Logger) {
	if off, _ := c.cqlOffUnderAuth(); off {
		logger.Warn("CQL listener off: authentication is on and the CQL listener has none yet, so the default cql_addr is not served; "+
			"setting cql_addr (--cql-addr) with authentication on is refused", "cql_addr", c.CQLAddr)
		c.CQLAddr = ""
	}
}
