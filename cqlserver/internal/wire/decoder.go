package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// ErrShortBody is returned when a message body ends before a value its
// layout promises; the wrapping error names the value.
var ErrShortBody = errors.New("cql wire: body too short")

// ErrBadLength is returned when a length field is negative where the
// notation forbids it.
var ErrBadLength = errors.New("cql wire: invalid length")

// ErrMalformed is returned for a value the notation does not allow: an
// unknown type id, a batch statement kind, a flag combination.
var ErrMalformed = errors.New("cql wire: malformed message")

// Decoder reads the protocol's notation types from one message body.
//
// It never allocates more than the body holds: every length is checked
// against the bytes that remain before anything is made, and a count of
// elements is checked against the least room those elements take. The
// first error sticks: later reads return zero values, and Err reports it.
// Byte slices it returns alias the body.
type Decoder struct {
	buf []byte
	off int
	err error
}

// NewDecoder returns a Decoder over body; the Decoder does not copy it.
func NewDecoder(body []byte) *Decoder { return &Decoder{buf: body} }

// Err returns the first error met, or nil.
func (d *Decoder) Err() error { return d.err }

// Remaining returns how many bytes are left unread.
func (d *Decoder) Remaining() int { return len(d.buf) - d.off }

func (d *Decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

// take returns the next n bytes, or nil (and the sticky error) if fewer
// remain; what names the value for the error.
func (d *Decoder) take(n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > d.Remaining() {
		d.fail(fmt.Errorf("%w: %s needs %d bytes, %d remain", ErrShortBody, what, n, d.Remaining()))
		return nil
	}
	b := d.buf[d.off : d.off+n : d.off+n]
	d.off += n
	return b
}

// Byte reads a [byte].
func (d *Decoder) Byte() byte {
	if b := d.take(1, "[byte]"); b != nil {
		return b[0]
	}
	return 0
}

// Short reads a [short] (unsigned).
func (d *Decoder) Short() uint16 {
	if b := d.take(2, "[short]"); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

// Int reads an [int].
func (d *Decoder) Int() int32 {
	if b := d.take(4, "[int]"); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

// Long reads a [long].
func (d *Decoder) Long() int64 {
	if b := d.take(8, "[long]"); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

// Str reads a [string]. (It is not named String, which would make a
// Decoder a fmt.Stringer that consumes its body when printed.)
func (d *Decoder) Str() string {
	n := int(d.Short())
	return string(d.take(n, "[string]"))
}

// LongString reads a [long string]; a negative length is an error.
func (d *Decoder) LongString() string {
	n := d.Int()
	if n < 0 {
		d.fail(fmt.Errorf("%w: [long string] of length %d", ErrBadLength, n))
		return ""
	}
	return string(d.take(int(n), "[long string]"))
}

// UUID reads a [uuid].
func (d *Decoder) UUID() [16]byte {
	var u [16]byte
	copy(u[:], d.take(16, "[uuid]"))
	return u
}

// count reads a [short] element count and checks that count elements of
// at least min bytes each fit in what remains.
func (d *Decoder) count(minEach int, what string) int {
	n := int(d.Short())
	if d.err == nil && n*minEach > d.Remaining() {
		d.fail(fmt.Errorf("%w: %s of %d elements needs at least %d bytes, %d remain",
			ErrShortBody, what, n, n*minEach, d.Remaining()))
		return 0
	}
	return n
}

// StringList reads a [string list].
func (d *Decoder) StringList() []string {
	n := d.count(2, "[string list]")
	if n == 0 {
		return nil
	}
	out := make([]string, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		out = append(out, d.Str())
	}
	return out
}

// Bytes reads a [bytes]; a negative length is null, returned as nil.
func (d *Decoder) Bytes() []byte {
	n := d.Int()
	if n < 0 {
		return nil
	}
	b := d.take(int(n), "[bytes]")
	if b == nil && d.err == nil {
		b = []byte{}
	}
	return b
}

// Value reads a [value]: bytes, null or not set. A length below -2 is an
// error.
func (d *Decoder) Value() Value {
	n := d.Int()
	switch {
	case n == -1:
		return Value{Null: true}
	case n == -2:
		return Value{Unset: true}
	case n < -2:
		d.fail(fmt.Errorf("%w: [value] of length %d", ErrBadLength, n))
		return Value{}
	}
	b := d.take(int(n), "[value]")
	if b == nil && d.err == nil {
		b = []byte{}
	}
	return Value{Bytes: b}
}

// ShortBytes reads a [short bytes].
func (d *Decoder) ShortBytes() []byte {
	n := int(d.Short())
	return d.take(n, "[short bytes]")
}

// Consistency reads a [consistency].
func (d *Decoder) Consistency() Consistency { return Consistency(d.Short()) }

// Inet reads an [inet]: an address and a port.
func (d *Decoder) Inet() netip.AddrPort {
	addr := d.InetAddr()
	port := d.Int()
	if d.err == nil && (port < 0 || port > 65535) {
		d.fail(fmt.Errorf("%w: [inet] port %d", ErrBadLength, port))
	}
	return netip.AddrPortFrom(addr, uint16(port))
}

// InetAddr reads an [inetaddr]: an address of 4 or 16 bytes.
func (d *Decoder) InetAddr() netip.Addr {
	n := int(d.Byte())
	if d.err == nil && n != 4 && n != 16 {
		d.fail(fmt.Errorf("%w: address of %d bytes (want 4 or 16)", ErrBadLength, n))
		return netip.Addr{}
	}
	b := d.take(n, "[inetaddr]")
	addr, _ := netip.AddrFromSlice(b)
	return addr
}

// StringMap reads a [string map]. A repeated key keeps its last value.
func (d *Decoder) StringMap() map[string]string {
	n := d.count(4, "[string map]")
	out := make(map[string]string, n)
	for i := 0; i < n && d.err == nil; i++ {
		k := d.Str()
		out[k] = d.Str()
	}
	return out
}

// StringMultimap reads a [string multimap].
func (d *Decoder) StringMultimap() map[string][]string {
	n := d.count(4, "[string multimap]")
	out := make(map[string][]string, n)
	for i := 0; i < n && d.err == nil; i++ {
		k := d.Str()
		out[k] = d.StringList()
	}
	return out
}

// BytesMap reads a [bytes map]; a null value is kept as nil.
func (d *Decoder) BytesMap() map[string][]byte {
	n := d.count(6, "[bytes map]")
	out := make(map[string][]byte, n)
	for i := 0; i < n && d.err == nil; i++ {
		k := d.Str()
		out[k] = d.Bytes()
	}
	return out
}

// Option reads an [option] describing a column type, nested types
// included. Nesting deeper than maxTypeDepth is an error, so a hostile
// body cannot exhaust the stack.
func (d *Decoder) Option() *Type { return option(d, 0) }
