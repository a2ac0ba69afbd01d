package metadata

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// The first byte of an encoded RequestRecord. Version 2 adds the
// fingerprint after it; version 1 records (written before fingerprints
// existed) still decode, with an unknown (zero) fingerprint, so the
// requests they remember keep answering retries.
const (
	recordVersion1 = 1
	recordVersion  = 2
)

// Error classes of a remembered failure. A record keeps the class and the
// message, not the error value, so a retry after a restart gets the same
// answer (and the same gRPC code) as the first try.
const (
	classOther byte = iota
	classInvalid
	classAlreadyExists
	classNotFound
	classGuardrail
)

// RecordedError is a remembered failure read back from the store or a
// snapshot. errors.Is matches it against the schema sentinel of its class.
type RecordedError struct {
	// Msg is the original error message.
	Msg string
	// Code is schema.ErrInvalid, ErrAlreadyExists, ErrNotFound,
	// guardrails.ErrFailed or nil.
	Code error
}

func (e *RecordedError) Error() string { return e.Msg }

// Unwrap returns the class sentinel.
func (e *RecordedError) Unwrap() error { return e.Code }

func classOf(err error) byte {
	var syn *cql.SyntaxError
	switch {
	case errors.As(err, &syn), errors.Is(err, schema.ErrInvalid), errors.Is(err, ErrEmptyCommand):
		return classInvalid
	case errors.Is(err, schema.ErrAlreadyExists):
		return classAlreadyExists
	case errors.Is(err, schema.ErrNotFound):
		return classNotFound
	case errors.Is(err, guardrails.ErrFailed):
		return classGuardrail
	}
	return classOther
}

var classCodes = [...]error{classOther: nil, classInvalid: schema.ErrInvalid, classAlreadyExists: schema.ErrAlreadyExists,
	classNotFound: schema.ErrNotFound, classGuardrail: guardrails.ErrFailed}

// AppendRequestRecord appends the encoding of rec to dst.
func AppendRequestRecord(dst []byte, rec RequestRecord) []byte {
	dst = append(dst, recordVersion)
	dst = append(dst, rec.Fingerprint[:]...)
	dst = binary.AppendUvarint(dst, rec.Index)
	dst = binary.AppendUvarint(dst, rec.Outcome.Epoch)
	dst = binary.AppendUvarint(dst, uint64(len(rec.Outcome.Results)))
	for _, r := range rec.Outcome.Results {
		dst = appendString(dst, r.Text)
		dst = appendString(dst, r.Result.Kind)
		dst = appendString(dst, r.Result.Keyspace)
		dst = appendString(dst, r.Result.Table)
		dst = appendString(dst, r.Result.Name)
		var applied byte
		if r.Result.Applied {
			applied = 1
		}
		dst = append(dst, applied)
		dst = binary.AppendUvarint(dst, r.Epoch)
	}
	dst = binary.AppendUvarint(dst, uint64(len(rec.Outcome.Warnings)))
	for _, w := range rec.Outcome.Warnings {
		dst = appendString(dst, w.Guardrail)
		dst = appendString(dst, w.Message)
	}
	if rec.Err == nil {
		return append(dst, 0)
	}
	dst = append(dst, 1, classOf(rec.Err))
	return appendString(dst, rec.Err.Error())
}

// DecodeRequestRecord decodes what AppendRequestRecord wrote.
func DecodeRequestRecord(b []byte) (RequestRecord, error) {
	d := recordDecoder{b: b}
	var rec RequestRecord
	switch v := d.byte(); {
	case d.err != nil:
	case v == recordVersion:
		d.read(rec.Fingerprint[:])
	case v != recordVersion1:
		return rec, fmt.Errorf("%w: request record version %d", ErrBadCommand, v)
	}
	rec.Index = d.uvarint()
	rec.Outcome.Epoch = d.uvarint()
	n := d.uvarint()
	if n > uint64(len(b)) {
		return rec, fmt.Errorf("%w: request record claims %d results in %d bytes", ErrBadCommand, n, len(b))
	}
	// A result takes at least 7 bytes: the capacity is bounded by what
	// the record can hold, whatever count it claims.
	rec.Outcome.Results = make([]StatementResult, 0, min(n, uint64(len(b)/7)))
	var prev StatementResult
	for range n {
		var r StatementResult
		r.Text = d.string()
		// Results of one request mostly share their kind and keyspace.
		r.Result.Kind = d.stringAs(prev.Result.Kind)
		r.Result.Keyspace = d.stringAs(prev.Result.Keyspace)
		r.Result.Table = d.string()
		r.Result.Name = d.string()
		r.Result.Applied = d.byte() == 1
		r.Epoch = d.uvarint()
		rec.Outcome.Results = append(rec.Outcome.Results, r)
		prev = r
	}
	if n == 0 {
		rec.Outcome.Results = nil
	}
	nw := d.uvarint()
	if nw > uint64(len(b)) {
		return rec, fmt.Errorf("%w: request record claims %d warnings in %d bytes", ErrBadCommand, nw, len(b))
	}
	for range nw {
		rec.Outcome.Warnings = append(rec.Outcome.Warnings, guardrails.Warning{Guardrail: d.string(), Message: d.string()})
	}
	if d.byte() == 1 {
		class := d.byte()
		msg := d.string()
		if int(class) >= len(classCodes) {
			return rec, fmt.Errorf("%w: request record error class %d", ErrBadCommand, class)
		}
		rec.Err = &RecordedError{Msg: msg, Code: classCodes[class]}
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: %d trailing bytes in request record", ErrBadCommand, len(d.b))
	}
	return rec, d.err
}

// recordDecoder reads fields until the first error, which it keeps.
type recordDecoder struct {
	b   []byte
	err error
}

func (d *recordDecoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.err = fmt.Errorf("%w: request record truncated", ErrBadCommand)
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

// read fills p from the input.
func (d *recordDecoder) read(p []byte) {
	if d.err != nil {
		return
	}
	if len(d.b) < len(p) {
		d.err = fmt.Errorf("%w: request record truncated", ErrBadCommand)
		return
	}
	d.b = d.b[copy(p, d.b):]
}

func (d *recordDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.err = fmt.Errorf("%w: bad varint in request record", ErrBadCommand)
		return 0
	}
	d.b = d.b[k:]
	return v
}

// stringAs reads a string, returning prev itself when the string is the
// same, so that a value repeated from result to result is one string.
func (d *recordDecoder) stringAs(prev string) string {
	if d.err != nil {
		return ""
	}
	if n, k := binary.Uvarint(d.b); k > 0 && n == uint64(len(prev)) && n <= uint64(len(d.b)-k) && string(d.b[k:k+int(n)]) == prev {
		d.b = d.b[k+int(n):]
		return prev
	}
	return d.string()
}

func (d *recordDecoder) string() string {
	if d.err != nil {
		return ""
	}
	var s string
	s, d.b, d.err = readString(d.b, "request record field")
	return s
}
