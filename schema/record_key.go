package schema

import "unicode/utf8"

// RecordKey returns the keyspace and the name under which the schema store
// keeps the object encoded in b: a table's, view's, user type's or index's
// name, a function's or aggregate's signature, and for a keyspace record
// its name as both. For all but functions it reads only the record's
// header, neither checking nor copying the rest, and the slices alias b;
// a function record is decoded whole to make its signature (functions are
// few). Use it where the whole record is validated elsewhere (a snapshot
// restore, which decodes every record): it only guarantees that the
// returned names are what the full decoders read. Input whose header is
// corrupt returns an *Error matching ErrInvalid.
func RecordKey(b []byte) (keyspace, name []byte, err error) {
	d := &decoder{b: b}
	if len(b) < 2 {
		d.fail("record of %d bytes", len(b))
		return nil, nil, d.err
	}
	kind := b[1]
	d.header(kind)
	switch kind {
	case recordKeyspace:
		keyspace = d.rawString()
		name = keyspace
	case recordTable, recordIndex:
		d.byte() // flags
		keyspace = d.rawString()
		if kind == recordIndex {
			d.rawString() // the table
		}
		name = d.rawString()
	case recordType:
		keyspace, name = d.rawString(), d.rawString()
	case recordFunction:
		f, err := DecodeFunction(b)
		if err != nil {
			return nil, nil, err
		}
		return []byte(f.Keyspace), []byte(f.Signature()), nil
	default:
		d.fail("unknown record kind %q", kind)
	}
	if d.err != nil {
		return nil, nil, d.err
	}
	return keyspace, name, nil
}

// rawString reads a length-prefixed UTF-8 string, aliasing the input.
func (d *decoder) rawString() []byte {
	n := int(d.uvarint(maxDecodeLen))
	p := d.bytes(n)
	if d.err != nil {
		return nil
	}
	if !utf8.Valid(p) {
		d.fail("string is not valid UTF-8")
		return nil
	}
	return p
}
