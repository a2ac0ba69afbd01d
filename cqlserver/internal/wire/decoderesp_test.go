package wire

import (
	"fmt"
)

// decodeResponse is the tests' reader of response frames, written from
// the spec's layouts, so that every encoder is checked by a round trip.
func decodeResponse(f Frame) (Message, []string, error) {
	d := NewDecoder(f.Body)
	var warnings []string
	if f.Flags&FlagWarning != 0 {
		warnings = d.StringList()
	}
	var m Message
	switch f.Opcode {
	case OpReady:
		m = &Ready{}
	case OpAuthenticate:
		m = &Authenticate{Authenticator: d.Str()}
	case OpSupported:
		m = &Supported{Options: d.StringMultimap()}
	case OpAuthChallenge:
		m = &AuthChallenge{Token: d.Bytes()}
	case OpAuthSuccess:
		m = &AuthSuccess{Token: d.Bytes()}
	case OpError:
		m = decodeError(d, f.Version)
	case OpResult:
		m = decodeResult(d, f.Version)
	case OpEvent:
		m = decodeEvent(d, f.Version)
	default:
		return nil, nil, fmt.Errorf("opcode %s", f.Opcode)
	}
	if d.Err() == nil && d.Remaining() != 0 {
		return nil, nil, fmt.Errorf("%d bytes left after %s", d.Remaining(), f.Opcode)
	}
	return m, warnings, d.Err()
}

func decodeError(d *Decoder, v Version) *Error {
	e := &Error{Code: ErrorCode(d.Int()), Message: d.Str()}
	switch e.Code {
	case CodeUnavailable:
		e.Detail = &UnavailableInfo{Consistency: d.Consistency(), Required: d.Int(), Alive: d.Int()}
	case CodeWriteTimeout:
		w := &WriteTimeoutInfo{Consistency: d.Consistency(), Received: d.Int(), BlockFor: d.Int(), WriteType: d.Str()}
		if v >= Version5 && w.WriteType == "CAS" {
			w.Contentions = d.Short()
		}
		e.Detail = w
	case CodeReadTimeout:
		e.Detail = &ReadTimeoutInfo{Consistency: d.Consistency(), Received: d.Int(), BlockFor: d.Int(), DataPresent: d.Byte() != 0}
	case CodeReadFailure, CodeWriteFailure:
		e.Detail = decodeFailure(d, v, e.Code == CodeWriteFailure)
	case CodeFunctionFailure:
		e.Detail = &FunctionFailureInfo{Keyspace: d.Str(), Function: d.Str(), ArgTypes: d.StringList()}
	case CodeAlreadyExists:
		e.Detail = &AlreadyExistsInfo{Keyspace: d.Str(), Table: d.Str()}
	case CodeUnprepared:
		e.Detail = &UnpreparedInfo{ID: d.ShortBytes()}
	case CodeCASWriteUnknown:
		e.Detail = &CASWriteUnknownInfo{Consistency: d.Consistency(), Received: d.Int(), BlockFor: d.Int()}
	}
	return e
}

func decodeFailure(d *Decoder, v Version, write bool) *FailureInfo {
	f := &FailureInfo{Write: write, Consistency: d.Consistency(), Received: d.Int(), BlockFor: d.Int()}
	n := int(d.Int())
	for i := 0; i < n && d.Err() == nil; i++ {
		if v < Version5 {
			f.Reasons = append(f.Reasons, FailureReason{})
			continue
		}
		f.Reasons = append(f.Reasons, FailureReason{Node: d.InetAddr(), Code: d.Short()})
	}
	if write {
		f.WriteType = d.Str()
	} else {
		f.DataPresent = d.Byte() != 0
	}
	return f
}

func decodeResult(d *Decoder, v Version) Message {
	switch ResultKind(d.Int()) {
	case KindVoid:
		return &Void{}
	case KindSetKeyspace:
		return &SetKeyspace{Keyspace: d.Str()}
	case KindSchemaChange:
		return decodeChange(d)
	case KindRows:
		r := &Rows{Metadata: decodeRowsMetadata(d)}
		n, cols := int(d.Int()), r.Metadata.count()
		for i := 0; i < n && d.Err() == nil; i++ {
			row := make([][]byte, cols)
			for j := range row {
				row[j] = d.Bytes()
			}
			r.Rows = append(r.Rows, row)
		}
		return r
	case KindPrepared:
		p := &Prepared{ID: d.ShortBytes()}
		if v >= Version5 {
			p.ResultMetadataID = d.ShortBytes()
		}
		flags, n, pks := d.Int(), int(d.Int()), int(d.Int())
		for i := 0; i < pks && d.Err() == nil; i++ {
			p.Bind.PKIndexes = append(p.Bind.PKIndexes, d.Short())
		}
		p.Bind.Columns = decodeSpecs(d, flags, n)
		p.Result = decodeRowsMetadata(d)
		return p
	}
	return nil
}

func decodeRowsMetadata(d *Decoder) RowsMetadata {
	var md RowsMetadata
	flags, n := d.Int(), int(d.Int())
	if flags&metaHasMorePages != 0 {
		md.PagingState = d.Bytes()
	}
	if flags&metaChanged != 0 {
		md.NewMetadataID = d.ShortBytes()
	}
	if flags&metaNoMetadata != 0 {
		md.NoMetadata, md.ColumnCount = true, n
		return md
	}
	md.Columns = decodeSpecs(d, flags, n)
	return md
}

func decodeSpecs(d *Decoder, flags int32, n int) []ColumnSpec {
	var ks, table string
	global := flags&metaGlobalTableSpec != 0
	if global {
		ks, table = d.Str(), d.Str()
	}
	var cols []ColumnSpec
	for i := 0; i < n && d.Err() == nil; i++ {
		c := ColumnSpec{Keyspace: ks, Table: table}
		if !global {
			c.Keyspace, c.Table = d.Str(), d.Str()
		}
		c.Name, c.Type = d.Str(), d.Option()
		cols = append(cols, c)
	}
	return cols
}

func decodeChange(d *Decoder) *SchemaChange {
	c := &SchemaChange{Change: d.Str(), Target: d.Str(), Keyspace: d.Str()}
	switch c.Target {
	case TargetKeyspace:
	case TargetFunction, TargetAggregate:
		c.Name, c.ArgTypes = d.Str(), d.StringList()
	default:
		c.Name = d.Str()
	}
	return c
}

func decodeEvent(d *Decoder, _ Version) Message {
	switch typ := d.Str(); typ {
	case EventSchemaChange:
		return &SchemaChangeEvent{Change: *decodeChange(d)}
	case EventTopologyChange:
		return &TopologyChangeEvent{Change: d.Str(), Node: d.Inet()}
	case EventStatusChange:
		return &StatusChangeEvent{Change: d.Str(), Node: d.Inet()}
	}
	return nil
}
