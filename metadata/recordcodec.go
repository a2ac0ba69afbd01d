package metadata

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema"
)

// historyRecordVersion is the first byte of an encoded Record. Version 2
// adds the role after the principal; it is written only for a record with
// a role, so that the records of changes by unscoped callers encode as
// before (and members that know only version 1 read them).
const (
	historyRecordVersion     = 1
	historyRecordVersionRole = 2
)

// ErrBadRecord is returned for bytes that do not decode as a Record.
var ErrBadRecord = errors.New("metadata: malformed history record")

// AppendRecord appends the encoding of r to dst. The encoding is canonical:
// members that applied the same entries encode their records alike, byte
// for byte.
func AppendRecord(dst []byte, r *Record) []byte {
	version := byte(historyRecordVersion)
	if r.Role != "" {
		version = historyRecordVersionRole
	}
	dst = append(dst, version)
	dst = binary.AppendUvarint(dst, r.Epoch)
	dst = binary.AppendUvarint(dst, r.Index)
	dst = binary.AppendVarint(dst, r.Time)
	dst = appendString(dst, r.Principal)
	if r.Role != "" {
		dst = appendString(dst, r.Role)
	}
	dst = appendString(dst, r.RequestID)
	dst = binary.AppendUvarint(dst, uint64(len(r.Events)))
	for i := range r.Events {
		dst = appendEvent(dst, &r.Events[i])
	}
	return dst
}

func appendEvent(dst []byte, e *Event) []byte {
	for _, s := range [...]string{e.Kind, e.Keyspace, e.Table, e.Name, e.Statement} {
		dst = appendString(dst, s)
	}
	switch {
	case e.Guardrails == nil:
		dst = append(dst, 0)
	case e.Guardrails.Scope != "":
		// A per-keyspace override (flag 2, added after 1: records of
		// the cluster's settings encode as before).
		dst = append(dst, 2)
		dst = appendBytes(dst, guardrails.AppendSettings(nil, e.Guardrails.Before))
		dst = appendString(dst, e.Guardrails.Scope)
		dst = appendBytes(dst, guardrails.AppendOverride(nil, e.Guardrails.OverrideBefore))
		dst = appendBytes(dst, guardrails.AppendOverride(nil, e.Guardrails.OverrideAfter))
	default:
		dst = append(dst, 1)
		dst = appendBytes(dst, guardrails.AppendSettings(nil, e.Guardrails.Before))
		dst = appendBytes(dst, guardrails.AppendSettings(nil, e.Guardrails.After))
	}
	dst = binary.AppendUvarint(dst, uint64(len(e.Changes)))
	for i, c := range e.Changes {
		dst = append(dst, byte(c.Op))
		dst = appendString(dst, c.Keyspace)
		dst = appendString(dst, c.Table)
		dst = appendString(dst, c.Name)
		dst = appendBytes(dst, schema.AppendPrior(nil, c.Op, e.Priors[i]))
		dst = appendBytes(dst, encodeAfter(c))
	}
	return dst
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// encodeAfter encodes the value a put change stores; nil for a drop.
func encodeAfter(c schema.Change) []byte {
	switch c.Op {
	case schema.OpPutKeyspace:
		return schema.AppendKeyspace(nil, c.KeyspaceValue)
	case schema.OpPutTable:
		return schema.AppendTable(nil, c.TableValue)
	case schema.OpPutType:
		return schema.AppendUserType(nil, c.TypeValue)
	case schema.OpPutIndex:
		return schema.AppendIndex(nil, c.IndexValue)
	case schema.OpPutFunction:
		return schema.AppendFunction(nil, c.FunctionValue)
	}
	return nil
}

// DecodeRecord decodes a Record encoded by AppendRecord; b is not
// retained.
func DecodeRecord(b []byte) (*Record, error) {
	d := historyDecoder{b: b}
	r := d.record()
	if d.err != nil {
		return nil, d.err
	}
	return r, nil
}

// RecordEpoch returns the epoch of an encoded Record without decoding the
// rest.
func RecordEpoch(b []byte) (uint64, error) {
	d := historyDecoder{b: b}
	if len(d.b) == 0 || !knownRecordVersion(d.b[0]) {
		return 0, fmt.Errorf("%w: unknown version", ErrBadRecord)
	}
	d.b = d.b[1:]
	epoch := d.uvarint("epoch")
	return epoch, d.err
}

// historyDecoder reads a record, keeping the first error.
type historyDecoder struct {
	b   []byte
	err error
}

func (d *historyDecoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrBadRecord}, args...)...)
	}
	d.b = nil
}

func (d *historyDecoder) uvarint(what string) uint64 {
	v, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.fail("bad %s", what)
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *historyDecoder) bytes(what string) []byte {
	n := d.uvarint(what + " length")
	if n > uint64(len(d.b)) {
		d.fail("%s length %d exceeds the %d bytes left", what, n, len(d.b))
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *historyDecoder) string(what string) string { return string(d.bytes(what)) }

// knownRecordVersion reports whether v is a record version this member
// decodes.
func knownRecordVersion(v byte) bool {
	return v == historyRecordVersion || v == historyRecordVersionRole
}

func (d *historyDecoder) record() *Record {
	if len(d.b) == 0 || !knownRecordVersion(d.b[0]) {
		d.fail("unknown version")
		return nil
	}
	version := d.b[0]
	d.b = d.b[1:]
	r := &Record{Epoch: d.uvarint("epoch"), Index: d.uvarint("index")}
	t, k := binary.Varint(d.b)
	if k <= 0 {
		d.fail("bad time")
		return nil
	}
	d.b = d.b[k:]
	r.Time = t
	r.Principal = d.string("principal")
	if version == historyRecordVersionRole {
		if r.Role = d.string("role"); r.Role == "" && d.err == nil {
			d.fail("empty role in a version %d record", version)
			return nil
		}
	}
	r.RequestID = d.string("request id")
	n := d.uvarint("event count")
	if n > uint64(len(d.b)) {
		d.fail("%d events in %d bytes", n, len(d.b))
		return nil
	}
	r.Events = make([]Event, n)
	for i := range r.Events {
		d.event(&r.Events[i])
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	return r
}

func (d *historyDecoder) event(e *Event) {
	e.Kind, e.Keyspace, e.Table = d.string("kind"), d.string("keyspace"), d.string("table")
	e.Name, e.Statement = d.string("name"), d.string("statement")
	if d.err != nil || len(d.b) == 0 {
		d.fail("truncated event")
		return
	}
	hasGuardrails := d.b[0]
	d.b = d.b[1:]
	switch hasGuardrails {
	case 0:
	case 1:
		before, err1 := guardrails.DecodeSettings(d.bytes("guardrails before"))
		after, err2 := guardrails.DecodeSettings(d.bytes("guardrails after"))
		if err := errors.Join(err1, err2); err != nil && d.err == nil {
			d.fail("%v", err)
			return
		}
		e.Guardrails = &GuardrailChange{Before: before, After: after}
	case 2:
		g, err1 := guardrails.DecodeSettings(d.bytes("guardrails"))
		scope := d.string("guardrails scope")
		before, err2 := guardrails.DecodeOverride(d.bytes("override before"))
		after, err3 := guardrails.DecodeOverride(d.bytes("override after"))
		if err := errors.Join(err1, err2, err3); err != nil && d.err == nil {
			d.fail("%v", err)
			return
		}
		if d.err != nil {
			return
		}
		if scope == "" || before.Scope != scope || after.Scope != scope {
			d.fail("override scopes %q, %q of a change of scope %q", before.Scope, after.Scope, scope)
			return
		}
		e.Guardrails = &GuardrailChange{Before: g, After: g, Scope: scope, OverrideBefore: before, OverrideAfter: after}
	default:
		d.fail("bad guardrails flag %d", hasGuardrails)
		return
	}
	n := d.uvarint("change count")
	if n > uint64(len(d.b)) {
		d.fail("%d changes in %d bytes", n, len(d.b))
		return
	}
	if n > 0 {
		e.Changes, e.Priors = make([]schema.Change, n), make([]any, n)
	}
	for i := range e.Changes {
		e.Changes[i], e.Priors[i] = d.change()
	}
}

func (d *historyDecoder) change() (schema.Change, any) {
	if len(d.b) == 0 {
		d.fail("truncated change")
		return schema.Change{}, nil
	}
	c := schema.Change{Op: schema.ChangeOp(d.b[0])}
	d.b = d.b[1:]
	c.Keyspace, c.Table, c.Name = d.string("change keyspace"), d.string("change table"), d.string("change name")
	priorBytes, afterBytes := d.bytes("prior"), d.bytes("after")
	if d.err != nil {
		return c, nil
	}
	prior, err := schema.DecodePrior(c.Op, priorBytes)
	if err == nil {
		err = decodeAfter(&c, afterBytes)
	}
	if err != nil {
		d.fail("%v %s: %v", c.Op, changeObject(c), err)
	}
	return c, prior
}

// changeObject names the object of c for an error.
func changeObject(c schema.Change) string {
	switch {
	case c.Name != "":
		return c.Keyspace + "." + c.Name
	case c.Table != "":
		return c.Keyspace + "." + c.Table
	}
	return c.Keyspace
}

// decodeAfter sets the value of a put change from what encodeAfter wrote.
func decodeAfter(c *schema.Change, b []byte) error {
	var err error
	switch c.Op {
	case schema.OpPutKeyspace:
		c.KeyspaceValue, err = schema.DecodeKeyspace(b)
	case schema.OpPutTable:
		c.TableValue, err = schema.DecodeTable(b)
	case schema.OpPutType:
		c.TypeValue, err = schema.DecodeUserType(b)
	case schema.OpPutIndex:
		c.IndexValue, err = schema.DecodeIndex(b)
	case schema.OpPutFunction:
		c.FunctionValue, err = schema.DecodeFunction(b)
	case schema.OpDropKeyspace, schema.OpDropTable, schema.OpDropType, schema.OpDropIndex, schema.OpDropFunction:
		if len(b) != 0 {
			err = fmt.Errorf("a drop with a value")
		}
	default:
		err = fmt.Errorf("unknown change op %d", c.Op)
	}
	return err
}
