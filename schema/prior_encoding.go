package schema

import "strconv"

// AppendPrior appends the encoding of prior, what Prior returned for a
// change of op, and returns the extended slice: nothing for no prior; for
// OpDropKeyspace the keyspace with its objects (AppendKeyspaceObjects),
// for OpPutKeyspace its own record (AppendKeyspace: undoing the change
// needs only its properties), the object's record otherwise. A value of
// another type appends nothing.
func AppendPrior(dst []byte, op ChangeOp, prior any) []byte {
	switch p := prior.(type) {
	case *Keyspace:
		if op == OpDropKeyspace {
			return AppendKeyspaceObjects(dst, p)
		}
		return AppendKeyspace(dst, p)
	case *Table:
		return AppendTable(dst, p)
	case *UserType:
		return AppendUserType(dst, p)
	case *Index:
		return AppendIndex(dst, p)
	case *Function:
		return AppendFunction(dst, p)
	}
	return dst
}

// DecodePrior decodes what AppendPrior wrote for a change of op: nil for
// empty input, otherwise a value Undo takes. Errors match ErrInvalid.
func DecodePrior(op ChangeOp, b []byte) (any, error) {
	if len(b) == 0 {
		return nil, nil
	}
	switch op {
	case OpPutKeyspace:
		return DecodeKeyspace(b)
	case OpDropKeyspace:
		return DecodeKeyspaceObjects(b)
	case OpPutTable, OpDropTable:
		return DecodeTable(b)
	case OpPutType, OpDropType:
		return DecodeUserType(b)
	case OpPutIndex, OpDropIndex:
		return DecodeIndex(b)
	case OpPutFunction, OpDropFunction:
		return DecodeFunction(b)
	}
	return nil, newError("", "", ErrInvalid, "unknown change op "+strconv.Itoa(int(op)))
}
