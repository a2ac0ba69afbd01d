package wire

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func requestFrame(v Version, flags Flags, m Message) Frame {
	body := m.AppendBody(nil, v)
	return Frame{Header: Header{Version: v, Flags: flags, Stream: 3, Opcode: m.Opcode(), Length: len(body)}, Body: body}
}

func allParams(v Version) QueryParams {
	p := QueryParams{
		Consistency: Quorum,
		Flags: QueryValues | QuerySkipMetadata | QueryPageSize | QueryPagingState |
			QuerySerialConsistency | QueryDefaultTimestamp | QueryNamedValues,
		Values:            []Value{{Bytes: []byte("x")}, {Null: true}, {Unset: true}},
		Names:             []string{"a", "b", "c"},
		PageSize:          5000,
		PagingState:       []byte{1, 2, 3},
		SerialConsistency: LocalSerial,
		DefaultTimestamp:  1_700_000_000_000_000,
	}
	if v >= Version5 {
		p.Flags |= QueryKeyspace | QueryNowInSeconds
		p.Keyspace, p.NowInSeconds = "ks", 1_700_000_000
	}
	return p
}

// TestRequestRoundTrip encodes every request on v4 and v5 and decodes it.
func TestRequestRoundTrip(t *testing.T) {
	for _, v := range SupportedVersions {
		payload := map[string][]byte{"k": []byte("v")}
		msgs := []Message{
			&Startup{Options: map[string]string{"CQL_VERSION": "3.0.0", "COMPRESSION": LZ4}},
			&Options{},
			&Register{Events: []string{EventSchemaChange, EventStatusChange}},
			&AuthResponse{Token: []byte("\x00cassandra\x00cassandra")},
			&Query{Query: "SELECT * FROM system_schema.tables", Params: allParams(v)},
			&Query{Query: "USE ks", Params: QueryParams{Consistency: One}},
			&Query{CustomPayload: payload, Query: "q", Params: QueryParams{Consistency: One}},
			&Prepare{Query: "SELECT * FROM t WHERE k = ?"},
			&Execute{ID: []byte{0xCA, 0xFE}, Params: allParams(v)},
			&Batch{Type: 1, Queries: []BatchQuery{
				{Query: "INSERT INTO t (k) VALUES (?)", Values: []Value{{Bytes: []byte{0, 0, 0, 1}}}},
				{Prepared: true, ID: []byte{9}},
			}, Params: QueryParams{Consistency: Quorum, Flags: QuerySerialConsistency | QueryDefaultTimestamp,
				SerialConsistency: Serial, DefaultTimestamp: 42}},
		}
		if v >= Version5 {
			msgs = append(msgs,
				&Prepare{Query: "SELECT 1", Keyspace: "ks"},
				&Execute{ID: []byte{1}, ResultMetadataID: []byte{2, 3}, Params: QueryParams{Consistency: One}})
		}
		for _, m := range msgs {
			var flags Flags
			if q, ok := m.(*Query); ok && q.CustomPayload != nil {
				flags = FlagCustomPayload
			}
			body := m.AppendBody(nil, v)
			if flags != 0 {
				body = append(AppendBytesMap(nil, payload), body...)
			}
			f := Frame{Header: Header{Version: v, Flags: flags, Opcode: m.Opcode(), Length: len(body)}, Body: body}
			got, err := DecodeRequest(f)
			if err != nil {
				t.Fatalf("v%d %s: %v", v, m.Opcode(), err)
			}
			if diff := cmp.Diff(m, got, equateEmpty); diff != "" {
				t.Errorf("v%d %s (-want +got)\n%s", v, m.Opcode(), diff)
			}
		}
	}
}

// TestQueryHandBuilt decodes QUERY bodies written from section 4.1.4:
// v4's flags are a [byte], v5's an [int] with keyspace and now.
func TestQueryHandBuilt(t *testing.T) {
	v4 := []byte{
		0, 0, 0, 8, 'S', 'E', 'L', 'E', 'C', 'T', ' ', '1', // [long string]
		0x00, 0x04, // QUORUM
		0x25,                                           // values, page size, default timestamp
		0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0xAB, 0xCD, // one value of two bytes
		0x00, 0x00, 0x00, 0x64, // page size 100
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, // timestamp 256
	}
	m, err := DecodeRequest(Frame{Header: Header{Version: Version4, Opcode: OpQuery}, Body: v4})
	if err != nil {
		t.Fatal(err)
	}
	want := &Query{Query: "SELECT 1", Params: QueryParams{Consistency: Quorum,
		Flags: QueryValues | QueryPageSize | QueryDefaultTimestamp, Values: []Value{{Bytes: []byte{0xAB, 0xCD}}},
		PageSize: 100, DefaultTimestamp: 256}}
	if diff := cmp.Diff(want, m, equateEmpty); diff != "" {
		t.Errorf("v4 (-want +got)\n%s", diff)
	}
	v5 := []byte{
		0, 0, 0, 1, 'Q',
		0x00, 0x01, // ONE
		0x00, 0x00, 0x01, 0x82, // skip metadata, keyspace, now in seconds
		0x00, 0x02, 'k', 's',
		0x00, 0x00, 0x00, 0x07,
	}
	m, err = DecodeRequest(Frame{Header: Header{Version: Version5, Opcode: OpQuery}, Body: v5})
	if err != nil {
		t.Fatal(err)
	}
	want = &Query{Query: "Q", Params: QueryParams{Consistency: One,
		Flags: QuerySkipMetadata | QueryKeyspace | QueryNowInSeconds, Keyspace: "ks", NowInSeconds: 7}}
	if diff := cmp.Diff(want, m, equateEmpty); diff != "" {
		t.Errorf("v5 (-want +got)\n%s", diff)
	}
	// The same v5 bytes read as v4 take the first flag byte as the flags
	// and fail on what follows.
	if _, err := DecodeRequest(Frame{Header: Header{Version: Version4, Opcode: OpQuery}, Body: v5[:9]}); err != nil {
		t.Errorf("v4 reading of a truncated body with no flags set: %v", err)
	}
}

func TestDecodeRequestRefusals(t *testing.T) {
	cases := []struct {
		name string
		f    Frame
		want error
	}{
		{"response", Frame{Header: Header{Version: Version4, Response: true, Opcode: OpReady}}, ErrNotRequest},
		{"response opcode", Frame{Header: Header{Version: Version4, Opcode: OpResult}}, ErrNotRequest},
		{"batch named values", Frame{Header: Header{Version: Version4, Opcode: OpBatch},
			Body: []byte{0, 0, 0, 0, 1, 0x40}}, ErrMalformed},
		{"batch low flag bits", Frame{Header: Header{Version: Version5, Opcode: OpBatch},
			Body: []byte{0, 0, 0, 0, 1, 0, 0, 0, 1}}, ErrMalformed},
		{"batch kind 2", Frame{Header: Header{Version: Version4, Opcode: OpBatch},
			Body: []byte{0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0}}, ErrMalformed},
		{"query value count lies", Frame{Header: Header{Version: Version4, Opcode: OpQuery},
			Body: []byte{0, 0, 0, 0, 0, 1, 0x01, 0xFF, 0xFF}}, ErrShortBody},
		{"empty startup", Frame{Header: Header{Version: Version4, Opcode: OpStartup}}, ErrShortBody},
	}
	for _, c := range cases {
		if _, err := DecodeRequest(c.f); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
}

func sampleColumns() []ColumnSpec {
	return []ColumnSpec{
		{Keyspace: "system_schema", Table: "tables", Name: "keyspace_name", Type: Native(TypeVarchar)},
		{Keyspace: "system_schema", Table: "tables", Name: "flags", Type: SetOf(Native(TypeVarchar))},
		{Keyspace: "system_schema", Table: "tables", Name: "extensions", Type: MapOf(Native(TypeVarchar), Native(TypeBlob))},
		{Keyspace: "system_schema", Table: "tables", Name: "id", Type: Native(TypeUUID)},
	}
}

func sampleResponses(v Version) []Message {
	node := netip.MustParseAddrPort("127.0.0.1:9042")
	mixed := append(sampleColumns(), ColumnSpec{Keyspace: "ks", Table: "other", Name: "u",
		Type: &Type{ID: TypeUDT, Keyspace: "ks", Name: "addr", Fields: []string{"street", "zip"},
			Elems: []*Type{Native(TypeVarchar), TupleOf(Native(TypeInt), ListOf(Native(TypeBigint)))}}})
	return []Message{
		&Ready{},
		&Authenticate{Authenticator: "org.apache.cassandra.auth.PasswordAuthenticator"},
		&Supported{Options: map[string][]string{"CQL_VERSION": {"3.4.7"}, "COMPRESSION": {LZ4}, "PROTOCOL_VERSIONS": {"4/v4", "5/v5"}}},
		&AuthChallenge{Token: []byte{1}},
		&AuthSuccess{},
		&Void{},
		&SetKeyspace{Keyspace: "ks"},
		&Rows{Metadata: RowsMetadata{Columns: sampleColumns(), PagingState: []byte{7}},
			Rows: [][][]byte{{[]byte("ks"), nil, {0, 0, 0, 0}, make([]byte, 16)}}},
		&Rows{Metadata: RowsMetadata{Columns: mixed}},
		&Rows{Metadata: RowsMetadata{NoMetadata: true, ColumnCount: 1}, Rows: [][][]byte{{{1}}, {{2}}}},
		&Prepared{ID: []byte{1, 2}, ResultMetadataID: onV5(v, []byte{3}),
			Bind:   PreparedMetadata{Columns: sampleColumns()[:1], PKIndexes: []uint16{0}},
			Result: RowsMetadata{Columns: sampleColumns()}},
		&Prepared{ID: []byte{4}, ResultMetadataID: onV5(v, []byte{}), Result: RowsMetadata{NoMetadata: true}},
		&SchemaChange{Change: Created, Target: TargetKeyspace, Keyspace: "ks"},
		&SchemaChange{Change: Updated, Target: TargetTable, Keyspace: "ks", Name: "t"},
		&SchemaChange{Change: Dropped, Target: TargetType, Keyspace: "ks", Name: "addr"},
		&SchemaChange{Change: Created, Target: TargetFunction, Keyspace: "ks", Name: "f", ArgTypes: []string{"int", "frozen<list<text>>"}},
		&SchemaChange{Change: Dropped, Target: TargetAggregate, Keyspace: "ks", Name: "a", ArgTypes: []string{}},
		&SchemaChangeEvent{Change: SchemaChange{Change: Created, Target: TargetTable, Keyspace: "ks", Name: "t"}},
		&TopologyChangeEvent{Change: "NEW_NODE", Node: node},
		&StatusChangeEvent{Change: "DOWN", Node: netip.MustParseAddrPort("[::1]:9042")},
		&Error{Code: CodeSyntax, Message: "line 1:0 no viable alternative"},
		&Error{Code: CodeUnavailable, Message: "u", Detail: &UnavailableInfo{Consistency: Quorum, Required: 2, Alive: 1}},
		&Error{Code: CodeWriteTimeout, Message: "w", Detail: &WriteTimeoutInfo{Consistency: One, Received: 0, BlockFor: 1, WriteType: "SIMPLE"}},
		&Error{Code: CodeWriteTimeout, Message: "w", Detail: &WriteTimeoutInfo{Consistency: Serial, BlockFor: 1, WriteType: "CAS", Contentions: v5Count(v, 3)}},
		&Error{Code: CodeReadTimeout, Message: "r", Detail: &ReadTimeoutInfo{Consistency: One, Received: 1, BlockFor: 1, DataPresent: true}},
		&Error{Code: CodeReadFailure, Message: "rf", Detail: &FailureInfo{Consistency: All, Received: 1, BlockFor: 3,
			Reasons: failures(v), DataPresent: true}},
		&Error{Code: CodeWriteFailure, Message: "wf", Detail: &FailureInfo{Write: true, Consistency: All, Reasons: failures(v), WriteType: "BATCH"}},
		&Error{Code: CodeFunctionFailure, Message: "f", Detail: &FunctionFailureInfo{Keyspace: "ks", Function: "f", ArgTypes: []string{"int"}}},
		&Error{Code: CodeAlreadyExists, Message: "Cannot add existing keyspace \"ks\"", Detail: &AlreadyExistsInfo{Keyspace: "ks"}},
		&Error{Code: CodeUnprepared, Message: "unknown", Detail: &UnpreparedInfo{ID: []byte{0xDE, 0xAD}}},
		&Error{Code: CodeCASWriteUnknown, Message: "c", Detail: &CASWriteUnknownInfo{Consistency: Serial, Received: 1, BlockFor: 2}},
	}
}

func onV5(v Version, b []byte) []byte {
	if v >= Version5 {
		return b
	}
	return nil
}

func v5Count(v Version, n uint16) uint16 {
	if v >= Version5 {
		return n
	}
	return 0
}

// failures are two replicas' failures; v4 carries only their number.
func failures(v Version) []FailureReason {
	if v < Version5 {
		return make([]FailureReason, 2)
	}
	return []FailureReason{{Node: netip.MustParseAddr("10.0.0.1"), Code: 1}, {Node: netip.MustParseAddr("::2"), Code: 0}}
}

// TestResponseRoundTrip frames every response on v4 and v5, with and
// without warnings, and reads it back with the tests' decoder.
func TestResponseRoundTrip(t *testing.T) {
	for _, v := range SupportedVersions {
		for _, m := range sampleResponses(v) {
			for _, warnings := range [][]string{nil, {"Aggregation query used without partition key"}} {
				f := ResponseFrame(v, 9, m, warnings)
				var buf bytes.Buffer
				if err := WriteFrame(&buf, f); err != nil {
					t.Fatal(err)
				}
				rf, err := ReadFrame(&buf, 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				if !rf.Response || rf.Stream != 9 || rf.Opcode != m.Opcode() {
					t.Fatalf("header %+v", rf.Header)
				}
				got, gotWarnings, err := decodeResponse(rf)
				if err != nil {
					t.Fatalf("v%d %T: %v", v, m, err)
				}
				if diff := cmp.Diff(m, got, equateEmpty); diff != "" {
					t.Errorf("v%d %T (-want +got)\n%s", v, m, diff)
				}
				if diff := cmp.Diff(warnings, gotWarnings, equateEmpty); diff != "" {
					t.Errorf("v%d %T warnings (-want +got)\n%s", v, m, diff)
				}
			}
		}
	}
}

// TestResponsesHandBuilt compares encoded responses with bytes written
// from sections 4.2 and 9 of the spec.
func TestResponsesHandBuilt(t *testing.T) {
	cases := []struct {
		name string
		m    Message
		v    Version
		want []byte
	}{
		{"AlreadyExists", &Error{Code: CodeAlreadyExists, Message: "x", Detail: &AlreadyExistsInfo{Keyspace: "ks", Table: "t"}}, Version4,
			[]byte{0, 0, 0x24, 0, 0, 1, 'x', 0, 2, 'k', 's', 0, 1, 't'}},
		{"schema change result", &SchemaChange{Change: Created, Target: TargetKeyspace, Keyspace: "k"}, Version4,
			[]byte{0, 0, 0, 5, 0, 7, 'C', 'R', 'E', 'A', 'T', 'E', 'D', 0, 8, 'K', 'E', 'Y', 'S', 'P', 'A', 'C', 'E', 0, 1, 'k'}},
		{"status event", &StatusChangeEvent{Change: "UP", Node: netip.MustParseAddrPort("1.2.3.4:9042")}, Version5,
			append([]byte{0, 13}, append([]byte("STATUS_CHANGE"), 0, 2, 'U', 'P', 4, 1, 2, 3, 4, 0, 0, 0x23, 0x52)...)},
		{"rows, global spec, one int column, one row", &Rows{
			Metadata: RowsMetadata{Columns: []ColumnSpec{{Keyspace: "k", Table: "t", Name: "c", Type: Native(TypeInt)}}},
			Rows:     [][][]byte{{{0, 0, 0, 5}}}}, Version4,
			[]byte{0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 'k', 0, 1, 't', 0, 1, 'c', 0, 9, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 5}},
		{"v5 prepared, no bind markers, no result metadata", &Prepared{ID: []byte{1}, ResultMetadataID: []byte{2}, Result: RowsMetadata{NoMetadata: true}}, Version5,
			[]byte{0, 0, 0, 4, 0, 1, 1, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0}},
		{"write timeout CAS on v5", &Error{Code: CodeWriteTimeout, Message: "", Detail: &WriteTimeoutInfo{Consistency: Serial, Received: 0, BlockFor: 1, WriteType: "CAS", Contentions: 2}}, Version5,
			[]byte{0, 0, 0x11, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 1, 0, 3, 'C', 'A', 'S', 0, 2}},
	}
	for _, c := range cases {
		if got := c.m.AppendBody(nil, c.v); !bytes.Equal(got, c.want) {
			t.Errorf("%s\n got % x\nwant % x", c.name, got, c.want)
		}
	}
}
