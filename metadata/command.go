package metadata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/metalog/metalog/schema"
)

// commandVersion is the first byte of every encoded Command. A node refuses
// to apply a command whose version it does not know rather than guess.
// Version 2 added the principal and the time; version 1 commands (logged
// before) still decode, with neither.
const (
	commandVersion   = 2
	commandVersionV1 = 1
)

// ErrBadCommand is returned for a log entry that does not decode as a Command.
var ErrBadCommand = errors.New("metadata: malformed command")

// CommandKind says what a Command does.
type CommandKind uint8

// Command kinds.
const (
	// KindDDL executes CQL DDL (Text).
	KindDDL CommandKind = iota
	// KindSetGuardrails replaces the guardrail settings (Guardrails).
	KindSetGuardrails
	// KindSetKeyspaceGuardrails replaces the per-keyspace guardrail
	// override of the scope in Keyspace (a keyspace name or a pattern
	// such as tenant_*) with the one encoded in Guardrails
	// (guardrails.AppendOverride); an override that sets nothing removes
	// the scope's. Members that predate it refuse the entry as a command
	// of an unknown kind.
	KindSetKeyspaceGuardrails
	// KindNameHistory names the history of the cluster Cluster with the
	// random Nonce (HistoryName): a leader proposes it when its cluster's
	// history has no name yet. It makes no epoch, no history record and no
	// feed event, and the first one applied for a cluster id wins: later
	// ones for it change nothing. Members that predate it refuse the
	// entry as a command of an unknown kind.
	KindNameHistory
	numKinds
)

// Command is what one client request puts in the log. A DDL command holds
// the CQL text exactly as the client sent it; every node parses it again
// when it applies the command.
type Command struct {
	// Kind says what the command does.
	Kind CommandKind
	// RequestID is the client's id for the request, empty if none.
	RequestID string
	// Keyspace is the default keyspace for unqualified table names.
	Keyspace string
	// Atomic applies all statements or none.
	Atomic bool
	// Text is the CQL text, one or more statements separated by ';'.
	Text string
	// MaxMutationSize is the proposing node's max_mutation_size, the limit
	// of the metadata_size guardrail. It travels with the command so that
	// every node checks the same limit. 0 disables the check.
	MaxMutationSize int64
	// Guardrails is the encoded guardrails.Settings of KindSetGuardrails.
	Guardrails []byte
	// OnlyIfUnset makes KindSetGuardrails a no-op once the cluster's
	// guardrails have been set (initial values from a config file).
	OnlyIfUnset bool
	// Principal is who asked, as the proposing member authenticated them
	// (a token name, a certificate CN, "anonymous"); empty for commands of
	// version 1 and for the member's own (initial guardrails).
	Principal string
	// Time is when the proposing member received the request, in Unix
	// nanoseconds (0: unknown). It travels in the log so that every
	// member's history says the same.
	Time int64
	// IfEpoch, when HasIfEpoch is set, makes a DDL command apply only if
	// the metadata is still at that epoch when the log applies it: every
	// member checks it at the same point of the log, so all refuse or all
	// apply (ErrEpochMoved).
	IfEpoch    uint64
	HasIfEpoch bool
	// Role is the grants a DDL command uses when the caller's are scoped
	// to keyspaces, comma separated (access.Grants.String: "ddl@shop");
	// empty for an unscoped caller, with authentication off, and for
	// commands logged before roles were recorded. Only a non-empty Role is
	// encoded (behind flagRole), so that clusters without scoped roles log
	// the same bytes as before and members that do not know it keep
	// applying their commands.
	Role string
	// Rules is the rules version the command applies with
	// (schema.Env.Rules): a member of this build proposes a DDL with the
	// highest its statements need (schema.StatementRules), and every
	// member applies it by those rules, so that all make the same schema
	// bytes whatever their build. 0 (the
	// value of entries logged before rules versions existed) is
	// schema.RulesOriginal and is not encoded.
	Rules uint64
	// Cluster is the id of the proposing member's cluster, which table
	// ids derive from under schema.RulesClusterTableIDs
	// (schema.ClusterTableID): it travels in the log so that every member
	// derives the same ids, a member replaying the entry after a forced new
	// cluster changed its own cluster id included. It is set, and encoded
	// (behind flagCluster), only on the DDL commands that need it, so that
	// the others log the same bytes as before; 0 for those and for entries
	// logged before, whose tables get the ids they always got
	// (schema.TableID). A KindNameHistory command names the history of
	// this cluster id (0 for a cluster bootstrapped before clusters had
	// ids).
	Cluster uint64
	// Nonce is the random name a KindNameHistory command gives its
	// cluster's history, never 0 there; 0 (not encoded) in other commands.
	Nonce uint64
}

const (
	flagAtomic      = 1 << 0
	flagOnlyIfUnset = 1 << 1
	flagIfEpoch     = 1 << 2 // IfEpoch follows Time
	flagRole        = 1 << 3 // Role follows IfEpoch (or Time)
	// flagRules: the rules version follows (after IfEpoch and Role, if any), a
	// uvarint of 1 to schema.CurrentRules. One number rather than a flag
	// per rule: the flag byte has few bits, and every rule that changes
	// what apply makes needs one.
	flagRules = 1 << 4
	// flagCluster: the cluster id follows (after the rules version), a
	// uvarint other than 0.
	flagCluster = 1 << 5
	// flagNonce: the nonce follows (after the cluster id), 8 bytes big
	// endian, not 0. Fixed size: it is random, so a varint would take 10.
	flagNonce = 1 << 6
	// knownFlags are the flags this build decodes.
	knownFlags = flagAtomic | flagOnlyIfUnset | flagIfEpoch | flagRole | flagRules | flagCluster | flagNonce
)

// flags returns the flag byte of c's encoding.
func (c Command) flags() byte {
	var flags byte
	if c.Atomic {
		flags |= flagAtomic
	}
	if c.HasIfEpoch {
		flags |= flagIfEpoch
	}
	if c.OnlyIfUnset {
		flags |= flagOnlyIfUnset
	}
	if c.Role != "" {
		flags |= flagRole
	}
	if c.Rules != schema.RulesOriginal {
		flags |= flagRules
	}
	if c.Cluster != 0 {
		flags |= flagCluster
	}
	if c.Nonce != 0 {
		flags |= flagNonce
	}
	return flags
}

// Marshal appends the encoding of c to dst and returns the extended slice.
// It grows dst at most once, to the size EncodedSize reports.
func (c Command) Marshal(dst []byte) []byte {
	flags := c.flags()
	dst = slices.Grow(dst, c.EncodedSize())
	dst = append(dst, commandVersion, byte(c.Kind), flags)
	dst = appendString(dst, c.RequestID)
	dst = appendString(dst, c.Keyspace)
	dst = appendString(dst, c.Text)
	dst = binary.AppendUvarint(dst, uint64(c.MaxMutationSize))
	dst = binary.AppendUvarint(dst, uint64(len(c.Guardrails)))
	dst = append(dst, c.Guardrails...)
	dst = appendString(dst, c.Principal)
	dst = binary.AppendVarint(dst, c.Time)
	if c.HasIfEpoch {
		dst = binary.AppendUvarint(dst, c.IfEpoch)
	}
	if c.Role != "" {
		dst = appendString(dst, c.Role)
	}
	if flags&flagRules != 0 {
		dst = binary.AppendUvarint(dst, c.Rules)
	}
	if flags&flagCluster != 0 {
		dst = binary.AppendUvarint(dst, c.Cluster)
	}
	if flags&flagNonce != 0 {
		dst = binary.BigEndian.AppendUint64(dst, c.Nonce)
	}
	return dst
}

// EncodedSize is the number of bytes Marshal appends for c.
func (c Command) EncodedSize() int {
	n := 3 + stringSize(c.RequestID) + stringSize(c.Keyspace) + stringSize(c.Text) +
		uvarintSize(uint64(c.MaxMutationSize)) + uvarintSize(uint64(len(c.Guardrails))) + len(c.Guardrails) +
		stringSize(c.Principal) + varintSize(c.Time)
	if c.HasIfEpoch {
		n += uvarintSize(c.IfEpoch)
	}
	if c.Role != "" {
		n += stringSize(c.Role)
	}
	if c.flags()&flagRules != 0 {
		n += uvarintSize(c.Rules)
	}
	if c.Cluster != 0 {
		n += uvarintSize(c.Cluster)
	}
	if c.Nonce != 0 {
		n += 8
	}
	return n
}

// stringSize is the size of s as appendString encodes it.
func stringSize(s string) int { return uvarintSize(uint64(len(s))) + len(s) }

// uvarintSize is the size of x as binary.AppendUvarint encodes it.
func uvarintSize(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

// varintSize is the size of x as binary.AppendVarint encodes it.
func varintSize(x int64) int {
	ux := uint64(x) << 1
	if x < 0 {
		ux = ^ux
	}
	return uvarintSize(ux)
}

// UnmarshalCommand decodes a Command produced by Marshal. The returned
// values are copies; b may be reused afterwards.
func UnmarshalCommand(b []byte) (Command, error) {
	var c Command
	if len(b) < 3 {
		return c, fmt.Errorf("%w: %d bytes is too short", ErrBadCommand, len(b))
	}
	if b[0] != commandVersion && b[0] != commandVersionV1 {
		return c, fmt.Errorf("%w: unknown version %d", ErrBadCommand, b[0])
	}
	if CommandKind(b[1]) >= numKinds {
		return c, fmt.Errorf("%w: unknown kind %d", ErrBadCommand, b[1])
	}
	c.Kind = CommandKind(b[1])
	if b[2]&^knownFlags != 0 || (b[0] == commandVersionV1 && b[2]&(flagIfEpoch|flagRole|flagRules|flagCluster|flagNonce) != 0) {
		return c, fmt.Errorf("%w: unknown flags %#x", ErrBadCommand, b[2])
	}
	c.Atomic = b[2]&flagAtomic != 0
	c.OnlyIfUnset = b[2]&flagOnlyIfUnset != 0
	c.HasIfEpoch = b[2]&flagIfEpoch != 0
	rest := b[3:]
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
	max, k := binary.Uvarint(rest)
	if k <= 0 || max > 1<<62 {
		return c, fmt.Errorf("%w: bad max mutation size", ErrBadCommand)
	}
	c.MaxMutationSize, rest = int64(max), rest[k:]
	var g string
	if g, rest, err = readString(rest, "guardrails"); err != nil {
		return c, err
	}
	if g != "" {
		c.Guardrails = []byte(g)
	}
	if b[0] != commandVersionV1 {
		if c.Principal, rest, err = readString(rest, "principal"); err != nil {
			return c, err
		}
		t, k := binary.Varint(rest)
		if k <= 0 {
			return c, fmt.Errorf("%w: bad time", ErrBadCommand)
		}
		c.Time, rest = t, rest[k:]
	}
	if rest, err = c.readFlagged(b[2], rest); err != nil {
		return c, err
	}
	if len(rest) != 0 {
		return c, fmt.Errorf("%w: %d trailing bytes", ErrBadCommand, len(rest))
	}
	return c, nil
}

// readFlagged reads the fields that follow the time when flags says they
// are there, in their order: if_epoch, role, rules version, cluster id,
// nonce.
func (c *Command) readFlagged(flags byte, rest []byte) ([]byte, error) {
	var err error
	if c.HasIfEpoch {
		e, k := binary.Uvarint(rest)
		if k <= 0 {
			return nil, fmt.Errorf("%w: bad if_epoch", ErrBadCommand)
		}
		c.IfEpoch, rest = e, rest[k:]
	}
	if flags&flagRole != 0 {
		if c.Role, rest, err = readString(rest, "role"); err != nil {
			return nil, err
		}
		if c.Role == "" {
			return nil, fmt.Errorf("%w: flagged role is empty", ErrBadCommand)
		}
	}
	if flags&flagRules != 0 {
		r, k := binary.Uvarint(rest)
		switch {
		case k <= 0 || r == schema.RulesOriginal:
			return nil, fmt.Errorf("%w: bad rules version", ErrBadCommand)
		case r > schema.CurrentRules:
			// A newer member proposed it: applying it by older rules
			// would make other bytes than the members that know them.
			return nil, fmt.Errorf("%w: rules version %d is newer than this build's %d (upgrade this member)", ErrBadCommand, r, schema.CurrentRules)
		}
		c.Rules, rest = r, rest[k:]
	}
	if flags&flagCluster != 0 {
		id, k := binary.Uvarint(rest)
		if k <= 0 || id == 0 {
			return nil, fmt.Errorf("%w: bad cluster id", ErrBadCommand)
		}
		c.Cluster, rest = id, rest[k:]
	}
	if flags&flagNonce != 0 {
		if len(rest) < 8 || binary.BigEndian.Uint64(rest) == 0 {
			return nil, fmt.Errorf("%w: bad nonce", ErrBadCommand)
		}
		c.Nonce, rest = binary.BigEndian.Uint64(rest), rest[8:]
	}
	return rest, nil
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
