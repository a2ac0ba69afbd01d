package schema

// A store or a snapshot holds a keyspace's tables as separate records,
// each with its own copy of the keyspace name and of its column names and
// types, though most of them repeat across the tables (id, created_at,
// set<text>). Decoded one by one, every table would hold strings and type
// values of its own; a TableDecoder decodes the tables of one keyspace
// and gives them the keyspace's name and the names and types it has seen
// before instead. Tables of one shape share more than that already (see
// table_share.go); this is for the tables whose shapes differ.

// maxShared bounds how many distinct names, and how many distinct column
// types, a TableDecoder remembers: the common ones come early, and a
// keyspace whose every table has names of its own does not make it grow
// with its tables.
const maxShared = 4096

// TableDecoder decodes tables in bulk, as a store's load and a
// snapshot's do, keyspace by keyspace, with the strings and types that
// repeat across the tables of a keyspace shared: every table's Keyspace
// is the Name of its Keyspace, and the column names and column types of a
// table are those of an earlier table of its keyspace when equal. It only
// saves memory: the tables are equal to those DecodeTable returns. Tables
// are best decoded keyspace by keyspace: what a TableDecoder shares is
// forgotten when a table of another keyspace comes. A TableDecoder is not
// safe for concurrent use; it is garbage once the tables are loaded.
type TableDecoder struct {
	keyspaces Schema // where the keyspaces' names come from
	last      string // the keyspace name of the last table
	names     map[string]string
	types     map[string]Type // by encoding
}

// NewTableDecoder returns a TableDecoder whose tables take their keyspace
// name from the keyspaces of s (a keyspace s does not hold gets a name of
// its own).
func NewTableDecoder(s Schema) *TableDecoder {
	return &TableDecoder{keyspaces: s, names: map[string]string{}, types: map[string]Type{}}
}

// Decode is DecodeTable with the strings and types shared. b is not
// retained.
func (td *TableDecoder) Decode(b []byte) (*Table, error) {
	return decodeTable(b, td, true)
}

// DecodeUnchecked is Decode without the check that the table is valid,
// for a loader that puts it with Builder.PutEncodedTable and compares the
// schema's digest with one it trusts afterwards. Input that does not
// decode still returns an *Error matching ErrInvalid.
func (td *TableDecoder) DecodeUnchecked(b []byte) (*Table, error) {
	return decodeTable(b, td, false)
}

// keyspace reads a table's keyspace name with d: the Name of its Keyspace
// in td's schema, or a new string when td is nil. A table of another
// keyspace than the last one's starts the sharing over.
func (td *TableDecoder) keyspace(d *decoder) string {
	p := d.rawString()
	if td == nil || d.err != nil {
		return string(p)
	}
	if string(p) == td.last {
		return td.last
	}
	name := string(p)
	if k, ok := td.keyspaces.Keyspace(name); ok {
		name = k.Name
	}
	td.last = name
	clear(td.names)
	clear(td.types)
	return name
}

// name reads a column name with d: as allocated for an earlier table
// when one had it, or a new string when td is nil.
func (td *TableDecoder) name(d *decoder) string {
	p := d.rawString()
	if td == nil || d.err != nil {
		return string(p)
	}
	if s, ok := td.names[string(p)]; ok {
		return s
	}
	s := string(p)
	if len(td.names) < maxShared {
		td.names[s] = s
	}
	return s
}

// columnType reads a column's type with d: as decoded for an earlier
// table when one had it, or as decoded when td is nil. Native types are
// values without allocation, returned as they are.
func (td *TableDecoder) columnType(d *decoder) Type {
	start := d.off
	typ := d.typ(0)
	if td == nil || d.err != nil {
		return typ
	}
	if _, native := typ.(NativeType); native {
		return typ
	}
	enc := d.b[start:d.off]
	if shared, ok := td.types[string(enc)]; ok {
		return shared
	}
	if len(td.types) < maxShared {
		td.types[string(enc)] = typ
	}
	return typ
}
