package snapshot

import "github.com/metalog/metalog/schema"

// RecordKind says which built-in section a Record comes from.
type RecordKind int

// The kinds of records, in the order the sections hold them.
const (
	RecordKeyspace RecordKind = iota
	RecordType
	RecordTable // tables and materialized views
	RecordIndex
	RecordRequest  // remembered requests: Name is the id, Data the record
	RecordFunction // functions and aggregates
)

// recordKinds maps the built-in sections that hold schema records to their
// kind and the name of one record in errors.
var recordKinds = map[SectionTag]struct {
	kind RecordKind
	what string
}{
	sectionKeyspaces: {RecordKeyspace, "keyspace"},
	sectionTypes:     {RecordType, "type"},
	sectionTables:    {RecordTable, "table"},
	sectionIndexes:   {RecordIndex, "index"},
	sectionFunctions: {RecordFunction, "function"},
}

// Record is one schema object as a snapshot holds it: in the encoding of
// schema.AppendKeyspace, AppendUserType, AppendTable, AppendIndex or
// AppendFunction, which is also how the schema store keeps it; or one
// remembered request (Request.Record, opaque here).
type Record struct {
	// Kind is the section the record comes from.
	Kind RecordKind
	// Keyspace and Name are the object's keys (schema.RecordKey): for a
	// keyspace both are its name, for a function its signature, for a
	// request no keyspace and its id.
	Keyspace, Name []byte
	// Data is the encoded object.
	Data []byte
}

// errStopped ends the walk of a section when fn failed.
var errStopped = &CorruptError{Reason: "walk stopped"}

// Records calls fn with every keyspace, type, table, index, request and
// function record of the snapshot b, section by section in the order b
// holds them (each schema section in keyspace, name order, the requests
// oldest first), without decoding them: it reads only the framing and
// each record's keys, and allocates nothing per record but for functions. The slices alias b; fn must not modify them.
// It stops at fn's first error and returns it.
//
// Records checks neither the checksum nor the records: it is meant to run
// next to Decode, which checks everything, and whose verdict decides
// whether the records may be used. It returns a *CorruptError on framing it
// cannot read, and never panics on bad input.
func Records(b []byte, fn func(Record) error) error {
	if string(b[:min(len(b), len(Magic))]) != Magic || len(b) < headerSize+checksumSize {
		return &CorruptError{Reason: "not a metalog snapshot"}
	}
	r := &reader{b: b[:len(b)-checksumSize], off: headerSize}
	r.header()
	for r.err == nil && r.off < len(r.b) {
		tag, bodyAt, body := r.section()
		k, ok := recordKinds[tag]
		if r.err != nil || !ok && tag != sectionRequests {
			continue
		}
		sub := &decoder{r: reader{b: r.b[:bodyAt+len(body)], off: bodyAt}}
		if tag == sectionRequests {
			if err := sub.eachRequest(fn); err != nil {
				return err
			}
			continue
		}
		var fnErr error
		sub.records(k.what, func(i, at int, rec []byte) {
			ks, name, err := schema.RecordKey(rec)
			if err != nil {
				sub.objectError(at, k.what, i, rec, err)
				return
			}
			if fnErr = fn(Record{Kind: k.kind, Keyspace: ks, Name: name, Data: rec}); fnErr != nil {
				sub.r.err = errStopped
			}
		})
		if fnErr != nil {
			return fnErr
		}
		if sub.r.err != nil {
			return sub.r.err
		}
	}
	if r.err != nil {
		return r.err
	}
	return nil
}

// eachRequest calls fn with each request of the requests section d reads,
// stopping at fn's first error, which it returns.
func (d *decoder) eachRequest(fn func(Record) error) error {
	r := &d.r
	n := r.count(2, "request")
	for range n {
		id := r.bytes(r.uvarint("request id length"), "request id")
		rec := r.bytes(r.uvarint("request record length"), "request record")
		if r.err != nil {
			return r.err
		}
		if err := fn(Record{Kind: RecordRequest, Name: id, Data: rec}); err != nil {
			return err
		}
	}
	if r.err != nil {
		return r.err
	}
	return nil
}
