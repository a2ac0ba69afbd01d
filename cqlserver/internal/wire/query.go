package wire

import "fmt"

// QueryFlags are the bits of <query_parameters>' flags; a [byte] on v4,
// an [int] on v5.
type QueryFlags uint32

// The query parameter flags (section 4.1.4 of the specs).
const (
	QueryValues            QueryFlags = 0x0001
	QuerySkipMetadata      QueryFlags = 0x0002
	QueryPageSize          QueryFlags = 0x0004
	QueryPagingState       QueryFlags = 0x0008
	QuerySerialConsistency QueryFlags = 0x0010
	QueryDefaultTimestamp  QueryFlags = 0x0020
	QueryNamedValues       QueryFlags = 0x0040
	QueryKeyspace          QueryFlags = 0x0080 // v5 only
	QueryNowInSeconds      QueryFlags = 0x0100 // v5 only
)

// v5Only are the flags v4 does not define; decoding v4 ignores them.
const v5Only = QueryKeyspace | QueryNowInSeconds

// QueryParams are the <query_parameters> of QUERY and EXECUTE. A field
// is meaningful when its flag is set in Flags.
type QueryParams struct {
	Consistency       Consistency
	Flags             QueryFlags
	Values            []Value  // QueryValues
	Names             []string // QueryNamedValues: parallel to Values
	PageSize          int32    // QueryPageSize
	PagingState       []byte   // QueryPagingState
	SerialConsistency Consistency
	DefaultTimestamp  int64 // QueryDefaultTimestamp, in microseconds
	Keyspace          string
	NowInSeconds      int32
}

// Has reports whether flag is set.
func (p *QueryParams) Has(flag QueryFlags) bool { return p.Flags&flag != 0 }

// Query is a QUERY request.
type Query struct {
	CustomPayload map[string][]byte
	Query         string
	Params        QueryParams
}

// Opcode returns OpQuery.
func (*Query) Opcode() Opcode { return OpQuery }

// AppendBody appends the query string and its parameters.
func (m *Query) AppendBody(b []byte, v Version) []byte {
	return m.Params.appendTo(AppendLongString(b, m.Query), v)
}

func queryFlags(d *Decoder, v Version) QueryFlags {
	if v >= Version5 {
		return QueryFlags(uint32(d.Int()))
	}
	return QueryFlags(d.Byte()) &^ v5Only
}

func appendQueryFlags(b []byte, f QueryFlags, v Version) []byte {
	if v >= Version5 {
		return AppendInt(b, int32(f))
	}
	return append(b, byte(f&^v5Only))
}

func queryParams(d *Decoder, v Version) QueryParams {
	p := QueryParams{Consistency: d.Consistency(), Flags: queryFlags(d, v)}
	if p.Has(QueryValues) {
		p.Values, p.Names = values(d, p.Has(QueryNamedValues))
	}
	if p.Has(QueryPageSize) {
		p.PageSize = d.Int()
	}
	if p.Has(QueryPagingState) {
		p.PagingState = d.Bytes()
	}
	return paramsTail(d, p)
}

// values reads a [short] n then n values, each after a [string] name if
// named.
func values(d *Decoder, named bool) ([]Value, []string) {
	least := 4
	if named {
		least = 6
	}
	n := d.count(least, "values")
	vals := make([]Value, 0, n)
	var names []string
	for i := 0; i < n && d.err == nil; i++ {
		if named {
			names = append(names, d.Str())
		}
		vals = append(vals, d.Value())
	}
	return vals, names
}

func appendValues(b []byte, vals []Value, names []string) []byte {
	b = AppendShort(b, shortLen(len(vals), "values"))
	for i, v := range vals {
		if names != nil {
			b = AppendString(b, names[i])
		}
		b = AppendValue(b, v)
	}
	return b
}

func (p *QueryParams) appendTo(b []byte, v Version) []byte {
	b = AppendConsistency(b, p.Consistency)
	b = appendQueryFlags(b, p.Flags, v)
	if p.Has(QueryValues) {
		var names []string
		if p.Has(QueryNamedValues) {
			names = p.Names
		}
		b = appendValues(b, p.Values, names)
	}
	if p.Has(QueryPageSize) {
		b = AppendInt(b, p.PageSize)
	}
	if p.Has(QueryPagingState) {
		b = AppendBytes(b, p.PagingState)
	}
	if p.Has(QuerySerialConsistency) {
		b = AppendConsistency(b, p.SerialConsistency)
	}
	if p.Has(QueryDefaultTimestamp) {
		b = AppendLong(b, p.DefaultTimestamp)
	}
	if v >= Version5 && p.Has(QueryKeyspace) {
		b = AppendString(b, p.Keyspace)
	}
	if v >= Version5 && p.Has(QueryNowInSeconds) {
		b = AppendInt(b, p.NowInSeconds)
	}
	return b
}

// BatchQuery is one statement of a BATCH: a query string or a prepared
// id, and its values.
type BatchQuery struct {
	Prepared bool   // kind 1: ID is set; kind 0: Query is
	Query    string // kind 0
	ID       []byte // kind 1
	Values   []Value
}

// Batch is a BATCH request, decoded so that it can be refused properly
// (metalog runs no DML).
type Batch struct {
	CustomPayload map[string][]byte
	Type          byte // 0 logged, 1 unlogged, 2 counter
	Queries       []BatchQuery
	Params        QueryParams // Consistency, Flags and the serial, timestamp, keyspace, now fields
}

// Opcode returns OpBatch.
func (*Batch) Opcode() Opcode { return OpBatch }

// AppendBody appends the batch as version v lays it out.
func (m *Batch) AppendBody(b []byte, v Version) []byte {
	b = append(b, m.Type)
	b = AppendShort(b, shortLen(len(m.Queries), "batch"))
	for _, q := range m.Queries {
		if q.Prepared {
			b = AppendShortBytes(append(b, 1), q.ID)
		} else {
			b = AppendLongString(append(b, 0), q.Query)
		}
		b = appendValues(b, q.Values, nil)
	}
	p := m.Params
	p.Flags &^= QueryValues | QuerySkipMetadata | QueryPageSize | QueryPagingState
	return p.appendTo(b, v)
}

func batch(d *Decoder, v Version, payload map[string][]byte) *Batch {
	m := &Batch{CustomPayload: payload, Type: d.Byte()}
	n := d.count(7, "batch")
	m.Queries = make([]BatchQuery, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		// Names would be told by a flag that comes after the statements,
		// which is why the spec says the feature cannot work; it is
		// refused below, so statements are read unnamed.
		m.Queries = append(m.Queries, batchQuery(d))
	}
	p := QueryParams{Consistency: d.Consistency(), Flags: queryFlags(d, v)}
	if p.Flags&0x0F != 0 && d.err == nil {
		d.fail(fmt.Errorf("%w: batch flags %#x set one of the four low bits", ErrMalformed, p.Flags))
	}
	if p.Has(QueryNamedValues) && d.err == nil {
		d.fail(fmt.Errorf("%w: batch with named values, which the protocol cannot carry", ErrMalformed))
	}
	m.Params = paramsTail(d, p)
	return m
}

func batchQuery(d *Decoder) BatchQuery {
	var q BatchQuery
	switch kind := d.Byte(); kind {
	case 0:
		q.Query = d.LongString()
	case 1:
		q.Prepared, q.ID = true, d.ShortBytes()
	default:
		d.fail(fmt.Errorf("%w: batch statement kind %d", ErrMalformed, kind))
	}
	q.Values, _ = values(d, false)
	return q
}

// paramsTail reads the parameters after the paging state: the serial
// consistency, timestamp, keyspace and now, as flagged.
func paramsTail(d *Decoder, p QueryParams) QueryParams {
	if p.Has(QuerySerialConsistency) {
		p.SerialConsistency = d.Consistency()
	}
	if p.Has(QueryDefaultTimestamp) {
		p.DefaultTimestamp = d.Long()
	}
	if p.Has(QueryKeyspace) {
		p.Keyspace = d.Str()
	}
	if p.Has(QueryNowInSeconds) {
		p.NowInSeconds = d.Int()
	}
	return p
}
