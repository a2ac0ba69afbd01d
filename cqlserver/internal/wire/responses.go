package wire

import "net/netip"

// ResponseFrame returns the frame carrying m on stream in version v, with
// warnings (if any) before the message and FlagWarning set.
func ResponseFrame(v Version, stream int16, m Message, warnings []string) Frame {
	h := Header{Version: v, Response: true, Stream: stream, Opcode: m.Opcode()}
	var body []byte
	if len(warnings) > 0 {
		h.Flags |= FlagWarning
		body = AppendStringList(body, warnings)
	}
	body = m.AppendBody(body, v)
	h.Length = len(body)
	return Frame{Header: h, Body: body}
}

// Ready is a READY response.
type Ready struct{}

// Authenticate is an AUTHENTICATE response naming the authenticator.
type Authenticate struct {
	Authenticator string // a class name, e.g. org.apache.cassandra.auth.PasswordAuthenticator
}

// Supported is a SUPPORTED response: the STARTUP options and their values.
type Supported struct {
	Options map[string][]string // CQL_VERSION, COMPRESSION, PROTOCOL_VERSIONS, ...
}

// AuthChallenge is an AUTH_CHALLENGE response: a SASL token.
type AuthChallenge struct {
	Token []byte
}

// AuthSuccess is an AUTH_SUCCESS response: the final SASL token.
type AuthSuccess struct {
	Token []byte // nil when null
}

// Opcode returns OpReady.
func (*Ready) Opcode() Opcode { return OpReady }

// Opcode returns OpAuthenticate.
func (*Authenticate) Opcode() Opcode { return OpAuthenticate }

// Opcode returns OpSupported.
func (*Supported) Opcode() Opcode { return OpSupported }

// Opcode returns OpAuthChallenge.
func (*AuthChallenge) Opcode() Opcode { return OpAuthChallenge }

// Opcode returns OpAuthSuccess.
func (*AuthSuccess) Opcode() Opcode { return OpAuthSuccess }

// AppendBody appends nothing: READY has an empty body.
func (*Ready) AppendBody(b []byte, _ Version) []byte { return b }

// AppendBody appends the authenticator's [string].
func (m *Authenticate) AppendBody(b []byte, _ Version) []byte {
	return AppendString(b, m.Authenticator)
}

// AppendBody appends the options as a [string multimap].
func (m *Supported) AppendBody(b []byte, _ Version) []byte {
	return AppendStringMultimap(b, m.Options)
}

// AppendBody appends the token as [bytes].
func (m *AuthChallenge) AppendBody(b []byte, _ Version) []byte { return AppendBytes(b, m.Token) }

// AppendBody appends the token as [bytes].
func (m *AuthSuccess) AppendBody(b []byte, _ Version) []byte { return AppendBytes(b, m.Token) }

// The event types of REGISTER and EVENT.
const (
	EventTopologyChange = "TOPOLOGY_CHANGE"
	EventStatusChange   = "STATUS_CHANGE"
	EventSchemaChange   = "SCHEMA_CHANGE"
)

// SchemaChangeEvent is an EVENT of type SCHEMA_CHANGE.
type SchemaChangeEvent struct {
	Change SchemaChange
}

// TopologyChangeEvent is an EVENT of type TOPOLOGY_CHANGE.
type TopologyChangeEvent struct {
	Change string // NEW_NODE or REMOVED_NODE
	Node   netip.AddrPort
}

// StatusChangeEvent is an EVENT of type STATUS_CHANGE.
type StatusChangeEvent struct {
	Change string // UP or DOWN
	Node   netip.AddrPort
}

// Opcode returns OpEvent.
func (*SchemaChangeEvent) Opcode() Opcode { return OpEvent }

// Opcode returns OpEvent.
func (*TopologyChangeEvent) Opcode() Opcode { return OpEvent }

// Opcode returns OpEvent.
func (*StatusChangeEvent) Opcode() Opcode { return OpEvent }

// AppendBody appends the event type and the change.
func (m *SchemaChangeEvent) AppendBody(b []byte, v Version) []byte {
	return m.Change.appendChange(AppendString(b, EventSchemaChange), v)
}

// AppendBody appends the event type, the change and the node.
func (m *TopologyChangeEvent) AppendBody(b []byte, _ Version) []byte {
	b = AppendString(AppendString(b, EventTopologyChange), m.Change)
	return AppendInet(b, m.Node)
}

// AppendBody appends the event type, the change and the node.
func (m *StatusChangeEvent) AppendBody(b []byte, _ Version) []byte {
	b = AppendString(AppendString(b, EventStatusChange), m.Change)
	return AppendInet(b, m.Node)
}
