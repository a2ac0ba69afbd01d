package wire

import "fmt"

// ResultKind is the [int] opening a RESULT body.
type ResultKind int32

// The result kinds.
const (
	KindVoid         ResultKind = 0x0001
	KindRows         ResultKind = 0x0002
	KindSetKeyspace  ResultKind = 0x0003
	KindPrepared     ResultKind = 0x0004
	KindSchemaChange ResultKind = 0x0005
)

// The flags of rows and prepared metadata.
const (
	metaGlobalTableSpec = 0x0001
	metaHasMorePages    = 0x0002
	metaNoMetadata      = 0x0004
	metaChanged         = 0x0008 // v5
)

// ColumnSpec names and types one column of a result, or one bind marker
// of a prepared statement.
type ColumnSpec struct {
	Keyspace, Table, Name string
	Type                  *Type
}

// RowsMetadata is the <metadata> of a Rows result and a Prepared
// result's <result_metadata>.
type RowsMetadata struct {
	Columns       []ColumnSpec
	NoMetadata    bool   // write ColumnCount but no column specs (the query's skip metadata)
	ColumnCount   int    // with NoMetadata; otherwise len(Columns)
	PagingState   []byte // non-nil: more pages follow
	NewMetadataID []byte // v5, non-nil: the metadata changed (Metadata_changed)
}

// Void is the RESULT of a query that returns nothing.
type Void struct{}

// Rows is a RESULT of kind Rows. Each row holds one [bytes] per column,
// nil for null.
type Rows struct {
	Metadata RowsMetadata
	Rows     [][][]byte
}

// SetKeyspace is the RESULT of USE.
type SetKeyspace struct {
	Keyspace string
}

// PreparedMetadata is a Prepared result's <metadata>: the bind markers.
type PreparedMetadata struct {
	Columns   []ColumnSpec
	PKIndexes []uint16 // the bind marker of each partition key column
}

// Prepared is the RESULT of PREPARE.
type Prepared struct {
	ID               []byte
	ResultMetadataID []byte // v5 only
	Bind             PreparedMetadata
	Result           RowsMetadata
}

// The change types of a schema change.
const (
	Created = "CREATED"
	Updated = "UPDATED"
	Dropped = "DROPPED"
)

// The targets of a schema change.
const (
	TargetKeyspace  = "KEYSPACE"
	TargetTable     = "TABLE"
	TargetType      = "TYPE"
	TargetFunction  = "FUNCTION"
	TargetAggregate = "AGGREGATE"
)

// SchemaChange is the RESULT of a DDL statement and the body of a
// SCHEMA_CHANGE event. Name is empty for a keyspace; ArgTypes (CQL
// types) are written for functions and aggregates only.
type SchemaChange struct {
	Change   string // Created, Updated or Dropped
	Target   string // TargetKeyspace, TargetTable, ...
	Keyspace string
	Name     string
	ArgTypes []string
}

// Opcode returns OpResult.
func (*Void) Opcode() Opcode { return OpResult }

// Opcode returns OpResult.
func (*Rows) Opcode() Opcode { return OpResult }

// Opcode returns OpResult.
func (*SetKeyspace) Opcode() Opcode { return OpResult }

// Opcode returns OpResult.
func (*Prepared) Opcode() Opcode { return OpResult }

// Opcode returns OpResult.
func (*SchemaChange) Opcode() Opcode { return OpResult }

// AppendBody appends the kind.
func (*Void) AppendBody(b []byte, _ Version) []byte { return AppendInt(b, int32(KindVoid)) }

// AppendBody appends the kind and the keyspace.
func (m *SetKeyspace) AppendBody(b []byte, _ Version) []byte {
	return AppendString(AppendInt(b, int32(KindSetKeyspace)), m.Keyspace)
}

// AppendBody appends the kind and the change.
func (m *SchemaChange) AppendBody(b []byte, v Version) []byte {
	return m.appendChange(AppendInt(b, int32(KindSchemaChange)), v)
}

func (m *SchemaChange) appendChange(b []byte, _ Version) []byte {
	b = AppendString(AppendString(b, m.Change), m.Target)
	b = AppendString(b, m.Keyspace)
	switch m.Target {
	case TargetKeyspace:
		return b
	case TargetFunction, TargetAggregate:
		return AppendStringList(AppendString(b, m.Name), m.ArgTypes)
	}
	return AppendString(b, m.Name)
}

// AppendBody appends the kind, the metadata and the rows. A row shorter
// or longer than the column count is a broken invariant.
func (m *Rows) AppendBody(b []byte, v Version) []byte {
	b = m.Metadata.appendTo(AppendInt(b, int32(KindRows)), v)
	n := m.Metadata.count()
	b = AppendInt(b, int32(len(m.Rows)))
	for i, row := range m.Rows {
		if len(row) != n {
			panic(fmt.Sprintf("cql wire: row %d has %d cells for %d columns", i, len(row), n))
		}
		for _, cell := range row {
			b = AppendBytes(b, cell)
		}
	}
	return b
}

// AppendBody appends the kind, the ids, the bind metadata and the result
// metadata.
func (m *Prepared) AppendBody(b []byte, v Version) []byte {
	b = AppendShortBytes(AppendInt(b, int32(KindPrepared)), m.ID)
	if v >= Version5 {
		b = AppendShortBytes(b, m.ResultMetadataID)
	}
	global := globalSpec(m.Bind.Columns)
	var flags int32
	if global {
		flags |= metaGlobalTableSpec
	}
	b = AppendInt(AppendInt(b, flags), int32(len(m.Bind.Columns)))
	b = AppendInt(b, int32(len(m.Bind.PKIndexes)))
	for _, i := range m.Bind.PKIndexes {
		b = AppendShort(b, i)
	}
	b = appendColumnSpecs(b, m.Bind.Columns, global)
	return m.Result.appendTo(b, v)
}

func (md *RowsMetadata) count() int {
	if md.NoMetadata {
		return md.ColumnCount
	}
	return len(md.Columns)
}

func (md *RowsMetadata) appendTo(b []byte, v Version) []byte {
	var flags int32
	global := !md.NoMetadata && globalSpec(md.Columns)
	if global {
		flags |= metaGlobalTableSpec
	}
	if md.PagingState != nil {
		flags |= metaHasMorePages
	}
	if md.NoMetadata {
		flags |= metaNoMetadata
	}
	changed := v >= Version5 && md.NewMetadataID != nil && !md.NoMetadata
	if changed {
		flags |= metaChanged
	}
	b = AppendInt(AppendInt(b, flags), int32(md.count()))
	if md.PagingState != nil {
		b = AppendBytes(b, md.PagingState)
	}
	if changed {
		b = AppendShortBytes(b, md.NewMetadataID)
	}
	if md.NoMetadata {
		return b
	}
	return appendColumnSpecs(b, md.Columns, global)
}

// globalSpec reports whether all columns share one keyspace and table,
// so that one global table spec names them.
func globalSpec(cols []ColumnSpec) bool {
	for _, c := range cols[min(1, len(cols)):] {
		if c.Keyspace != cols[0].Keyspace || c.Table != cols[0].Table {
			return false
		}
	}
	return len(cols) > 0
}

func appendColumnSpecs(b []byte, cols []ColumnSpec, global bool) []byte {
	if global {
		b = AppendString(AppendString(b, cols[0].Keyspace), cols[0].Table)
	}
	for _, c := range cols {
		if !global {
			b = AppendString(AppendString(b, c.Keyspace), c.Table)
		}
		b = AppendOption(AppendString(b, c.Name), c.Type)
	}
	return b
}
