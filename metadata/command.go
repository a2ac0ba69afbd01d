package metadata

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// commandVersion is the first byte of every encoded Command. A node refuses
// to apply a command whose version it does not know rather than guess.
const commandVersion = 1

// ErrBadCommand is returned for a log entry that does not decode as a Command.
var ErrBadCommand = errors.New("metadata: malformed command")

// Command is what one client request puts in the log: the DDL text and how
// to apply it. Every node parses Text again when it applies the command, so
// the log holds exactly what the client sent.
type Command struct {
	// RequestID is the client's id for the request, empty if none.
	RequestID string
	// Keyspace is the default keyspace for unqualified table names.
	Keyspace string
	// Atomic applies all statements or none.
	Atomic bool
	// Text is the CQL text, one or more statements separated by ';'.
	Text string
}

// Marshal appends the encoding of c to dst and returns the extended slice.
func (c Command) Marshal(dst []byte) []byte {
	dst = append(dst, commandVersion)
	var flags byte
	if c.Atomic {
		flags |= 1
	}
	dst = append(dst, flags)
	dst = appendString(dst, c.RequestID)
	dst = appendString(dst, c.Keyspace)
	dst = appendString(dst, c.Text)
	return dst
}

// UnmarshalCommand decodes a Command produced by Marshal. The returned
// strings are copies; b may be reused afterwards.
func UnmarshalCommand(b []byte) (Command, error) {
	var c Command
	if len(b) < 2 {
		return c, fmt.Errorf("%w: %d bytes is too short", ErrBadCommand, len(b))
	}
	if b[0] != commandVersion {
		return c, fmt.Errorf("%w: unknown version %d", ErrBadCommand, b[0])
	}
	c.Atomic = b[1]&1 != 0
	rest := b[2:]
	var err error
	if c.RequestID, rest, err = readString(rest, "request id"); err != nil {
		return c, err
	}
	if c.Keyspace, rest, err = readString(rest, "keyspace"); err != nil {
		return c, err
	}
	if c.Text, rest, err = readString(rest, "text"); err != nil {
		return c, err
	}
	if len(rest) != 0 {
		return c, fmt.Errorf("%w: %d trailing bytes", ErrBadCommand, len(rest))
	}
	return c, nil
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func readString(b []byte, field string) (string, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return "", nil, fmt.Errorf("%w: bad length of %s", ErrBadCommand, field)
	}
	b = b[k:]
	if n > uint64(len(b)) {
		return "", nil, fmt.Errorf("%w: %s length %d exceeds the %d bytes left", ErrBadCommand, field, n, len(b))
	}
	return string(b[:n]), b[n:], nil
}
