package cqlserver

import (
	"fmt"
	"strings"

	"github.com/metalog/metalog/cqlserver/internal/wire"
)

// The values of SUPPORTED.
var supported = map[string][]string{
	"CQL_VERSION":       {"3.4.7"},
	"PROTOCOL_VERSIONS": {"4/v4", "5/v5"},
	"COMPRESSION":       {wire.LZ4},
}

// handle answers one request frame. It runs on the reader goroutine; only
// DDL leaves it, on a goroutine of its own that queues the answer (handle
// returns nil then).
func (c *conn) handle(f wire.Frame) *pending {
	if c.version == 0 {
		c.version = f.Version
	}
	if f.Version != c.version {
		return c.lastError(f, wire.CodeProtocol, fmt.Sprintf("protocol version %d on a connection of version %d", f.Version, c.version))
	}
	req, err := wire.DecodeRequest(f)
	if err != nil {
		return c.lastError(f, wire.CodeProtocol, err.Error())
	}
	if !c.started {
		switch m := req.(type) {
		case *wire.Options:
			return c.reply(f, &wire.Supported{Options: supported}, nil)
		case *wire.Startup:
			return c.startup(f, m)
		}
		return c.lastError(f, wire.CodeProtocol, "unexpected message "+f.Opcode.String()+", expecting STARTUP or OPTIONS")
	}
	if !c.session.authed {
		switch m := req.(type) {
		case *wire.Options:
			return c.reply(f, &wire.Supported{Options: supported}, nil)
		case *wire.AuthResponse:
			return c.authResponse(f, m)
		}
		return c.lastError(f, wire.CodeProtocol, "unexpected message "+f.Opcode.String()+", expecting AUTH_RESPONSE: "+
			"authentication is on (PasswordAuthenticator; the password is a metalog token)")
	}
	switch m := req.(type) {
	case *wire.Options:
		return c.reply(f, &wire.Supported{Options: supported}, nil)
	case *wire.Register:
		return c.register(f, m)
	case *wire.Query:
		return c.query(f, m)
	case *wire.Startup:
		return c.lastError(f, wire.CodeProtocol, "unexpected message STARTUP: the connection is started already")
	case *wire.Prepare:
		return c.prepare(f, m)
	case *wire.Execute:
		return c.execute(f, m)
	case *wire.Batch:
		return c.errorf(f, wire.CodeInvalid, "BATCH is not served: metalog serves DDL as plain queries")
	}
	return c.lastError(f, wire.CodeProtocol, "unexpected message "+f.Opcode.String())
}

// startup answers STARTUP: READY, or AUTHENTICATE when the client must
// authenticate, with lz4 if asked for, and on v5 the switch to segments
// for both directions (after either answer).
func (c *conn) startup(f wire.Frame, m *wire.Startup) *pending {
	switch comp := strings.ToLower(m.Options["COMPRESSION"]); comp {
	case "":
	case wire.LZ4:
		c.compress = true
	default:
		return c.errorf(f, wire.CodeProtocol, "unsupported compression %q: the server speaks lz4", comp)
	}
	c.started = true
	var p *pending
	if c.session.begin(c.srv.cfg.Authenticator, peerCertificates(c.nc)) {
		p = c.reply(f, &wire.Ready{}, nil)
	} else {
		p = c.reply(f, &wire.Authenticate{Authenticator: passwordAuthenticator}, nil)
	}
	if c.version == wire.Version5 {
		p.segments, p.compress = true, c.compress
		c.segments = wire.NewSegmentReader(c.br, c.compress, c.srv.cfg.MaxFrameBytes)
	} else {
		p.compress = c.compress
	}
	return p
}

// reply returns the response m to the request f, ready.
func (c *conn) reply(f wire.Frame, m wire.Message, warnings []string) *pending {
	return ready(wire.ResponseFrame(c.version, f.Stream, m, warnings))
}

// errorf returns an ERROR response to f.
func (c *conn) errorf(f wire.Frame, code wire.ErrorCode, format string, args ...any) *pending {
	return c.reply(f, &wire.Error{Code: code, Message: fmt.Sprintf(format, args...)}, nil)
}

// lastError returns an ERROR response to f after which the connection
// closes: the client broke the protocol.
func (c *conn) lastError(f wire.Frame, code wire.ErrorCode, msg string) *pending {
	p := c.reply(f, &wire.Error{Code: code, Message: msg}, nil)
	p.last = true
	return p
}
