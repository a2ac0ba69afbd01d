package schema

import "encoding/binary"

// recordFunction is the record kind of a function or aggregate.
const recordFunction = 'F'

// AppendFunction appends the canonical encoding of f to dst and returns the
// extended slice: the kind, keyspace and name, the arguments (a function's
// with their names), the return type, then for a function whether it is
// called on null input, its language and body, and for an aggregate its
// state function, state type, final function and initial condition. It
// allocates only when dst must grow.
func AppendFunction(dst []byte, f *Function) []byte {
	dst = append(dst, EncodingVersion, recordFunction, byte(f.Kind))
	dst = appendString(dst, f.Keyspace)
	dst = appendString(dst, f.Name)
	dst = binary.AppendUvarint(dst, uint64(len(f.ArgTypes)))
	for i, t := range f.ArgTypes {
		if f.Kind == ScalarFunction && i < len(f.ArgNames) {
			dst = appendString(dst, f.ArgNames[i])
		}
		dst = appendType(dst, t)
	}
	dst = appendType(dst, f.ReturnType)
	if f.Kind == AggregateFunction {
		dst = appendString(dst, f.StateFunc)
		dst = appendType(dst, f.StateType)
		dst = appendString(dst, f.FinalFunc)
		return appendString(dst, f.InitCond)
	}
	var flags byte
	if f.CalledOnNullInput {
		flags = 1
	}
	dst = append(dst, flags)
	dst = appendString(dst, f.Language)
	return appendString(dst, f.Body)
}

// DecodeFunction decodes a function or aggregate encoded by AppendFunction
// and checks that it is valid (not that the types and functions it uses
// exist). Corrupt or invalid input returns an *Error matching ErrInvalid;
// b is not retained.
func DecodeFunction(b []byte) (*Function, error) {
	d := &decoder{b: b}
	d.header(recordFunction)
	f := &Function{Kind: FunctionKind(d.byte())}
	if d.err == nil && f.Kind != ScalarFunction && f.Kind != AggregateFunction {
		d.off--
		d.fail("unknown function kind %d", f.Kind)
	}
	f.Keyspace, f.Name = d.string(), d.string()
	if n := d.count(1); d.err == nil && n > 0 {
		f.ArgTypes = make([]Type, n)
		if f.Kind == ScalarFunction {
			f.ArgNames = make([]string, n)
		}
		for i := range f.ArgTypes {
			if f.Kind == ScalarFunction {
				f.ArgNames[i] = d.string()
			}
			f.ArgTypes[i] = d.typ(0)
		}
	}
	f.ReturnType = d.typ(0)
	if f.Kind == AggregateFunction {
		f.StateFunc = d.string()
		f.StateType = d.typ(0)
		f.FinalFunc = d.string()
		f.InitCond = d.string()
	} else {
		switch flags := d.byte(); flags {
		case 0:
		case 1:
			f.CalledOnNullInput = true
		default:
			d.off--
			d.fail("unknown function flags %#x", flags)
		}
		f.Language = d.string()
		f.Body = d.string()
	}
	d.end()
	if d.err != nil {
		return nil, d.err
	}
	if r := validateFunction(f); r != "" {
		return nil, &Error{Statement: "DECODE", Object: f.QualifiedName(), Reason: r, Code: ErrInvalid}
	}
	return f, nil
}
