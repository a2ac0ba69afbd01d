package wire

import (
	"errors"
	"fmt"
)

// ErrNotRequest is returned by DecodeRequest for a frame that is a
// response or has a response's opcode.
var ErrNotRequest = errors.New("cql wire: not a request")

// Message is a request or response message: its opcode and its body's
// layout. The requests and the responses are the types of this package
// named after them.
type Message interface {
	// Opcode is the message's opcode.
	Opcode() Opcode
	// AppendBody appends the message's body as version v lays it out.
	AppendBody(b []byte, v Version) []byte
}

// Startup is a STARTUP request: the connection's options.
type Startup struct {
	Options map[string]string // CQL_VERSION, COMPRESSION, DRIVER_NAME, ...
}

// Options is an OPTIONS request.
type Options struct{}

// Register is a REGISTER request: the event types wanted.
type Register struct {
	Events []string // TOPOLOGY_CHANGE, STATUS_CHANGE, SCHEMA_CHANGE
}

// AuthResponse is an AUTH_RESPONSE request: a SASL token.
type AuthResponse struct {
	Token []byte // nil when null
}

// Prepare is a PREPARE request.
type Prepare struct {
	CustomPayload map[string][]byte
	Query         string
	Keyspace      string // v5 only; empty when not given
}

// Execute is an EXECUTE request.
type Execute struct {
	CustomPayload    map[string][]byte
	ID               []byte
	ResultMetadataID []byte // v5 only
	Params           QueryParams
}

// Opcode returns OpStartup.
func (*Startup) Opcode() Opcode { return OpStartup }

// Opcode returns OpOptions.
func (*Options) Opcode() Opcode { return OpOptions }

// Opcode returns OpRegister.
func (*Register) Opcode() Opcode { return OpRegister }

// Opcode returns OpAuthResponse.
func (*AuthResponse) Opcode() Opcode { return OpAuthResponse }

// Opcode returns OpPrepare.
func (*Prepare) Opcode() Opcode { return OpPrepare }

// Opcode returns OpExecute.
func (*Execute) Opcode() Opcode { return OpExecute }

// AppendBody appends the options as a [string map].
func (m *Startup) AppendBody(b []byte, _ Version) []byte { return AppendStringMap(b, m.Options) }

// AppendBody appends nothing: OPTIONS has an empty body.
func (*Options) AppendBody(b []byte, _ Version) []byte { return b }

// AppendBody appends the events as a [string list].
func (m *Register) AppendBody(b []byte, _ Version) []byte { return AppendStringList(b, m.Events) }

// AppendBody appends the token as [bytes].
func (m *AuthResponse) AppendBody(b []byte, _ Version) []byte { return AppendBytes(b, m.Token) }

// prepareWithKeyspace is PREPARE's v5 flag for a keyspace.
const prepareWithKeyspace = 0x01

// AppendBody appends the query, and on v5 the flags and keyspace.
func (m *Prepare) AppendBody(b []byte, v Version) []byte {
	b = AppendLongString(b, m.Query)
	if v < Version5 {
		return b
	}
	if m.Keyspace == "" {
		return AppendInt(b, 0)
	}
	return AppendString(AppendInt(b, prepareWithKeyspace), m.Keyspace)
}

// AppendBody appends the id, on v5 the result metadata id, then the
// parameters.
func (m *Execute) AppendBody(b []byte, v Version) []byte {
	b = AppendShortBytes(b, m.ID)
	if v >= Version5 {
		b = AppendShortBytes(b, m.ResultMetadataID)
	}
	return m.Params.appendTo(b, v)
}

// DecodeRequest decodes a request frame's body (decompressed already, for
// v4) by its opcode. The custom payload, when flagged, is read for the
// messages that may carry one. Bytes after the message are ignored, as
// the spec allows. Slices in the result alias the body.
func DecodeRequest(f Frame) (Message, error) {
	if f.Response {
		return nil, fmt.Errorf("%w: response frame (%s)", ErrNotRequest, f.Opcode)
	}
	d := NewDecoder(f.Body)
	var payload map[string][]byte
	switch f.Opcode {
	case OpQuery, OpPrepare, OpExecute, OpBatch:
		if f.Flags&FlagCustomPayload != 0 {
			payload = d.BytesMap()
		}
	}
	m, err := decodeMessage(d, f.Opcode, f.Version, payload)
	if err != nil {
		return nil, err
	}
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Opcode, err)
	}
	return m, nil
}

func decodeMessage(d *Decoder, op Opcode, v Version, payload map[string][]byte) (Message, error) {
	switch op {
	case OpStartup:
		return &Startup{Options: d.StringMap()}, nil
	case OpOptions:
		return &Options{}, nil
	case OpRegister:
		return &Register{Events: d.StringList()}, nil
	case OpAuthResponse:
		return &AuthResponse{Token: d.Bytes()}, nil
	case OpQuery:
		m := &Query{CustomPayload: payload, Query: d.LongString()}
		m.Params = queryParams(d, v)
		return m, nil
	case OpPrepare:
		m := &Prepare{CustomPayload: payload, Query: d.LongString()}
		if v >= Version5 && d.Int()&prepareWithKeyspace != 0 {
			m.Keyspace = d.Str()
		}
		return m, nil
	case OpExecute:
		m := &Execute{CustomPayload: payload, ID: d.ShortBytes()}
		if v >= Version5 {
			m.ResultMetadataID = d.ShortBytes()
		}
		m.Params = queryParams(d, v)
		return m, nil
	case OpBatch:
		return batch(d, v, payload), nil
	}
	return nil, fmt.Errorf("%w: opcode %s", ErrNotRequest, op)
}
