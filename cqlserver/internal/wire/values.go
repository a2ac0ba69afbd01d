package wire

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrValue is returned when a Go value cannot be encoded as a column type.
var ErrValue = errors.New("cql wire: value does not fit its type")

// EncodeValue returns v serialized as a cell of type t (the content of a
// [bytes], section 6 of the v4 spec), or nil for a nil v (null).
//
// It takes the Go values the system tables need: string for ascii and
// text; int32 or int for int; int64 or int for bigint and counter; bool;
// [16]byte for uuid and timeuuid; float64 for double; float32 for float;
// []byte for blob; time.Time or int64 milliseconds for timestamp;
// netip.Addr for inet; slices for list and set, maps for map, both of
// anything encodable. Maps and sets are written in key order (strings
// and numbers by value, others by their encoding), as Cassandra sorts
// them.
func EncodeValue(t *Type, v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	if b, ok, err := encodeNative(t.ID, v); ok || err != nil {
		return b, err
	}
	switch t.ID {
	case TypeList, TypeSet:
		return encodeList(t, reflect.ValueOf(v))
	case TypeMap:
		return encodeMap(t, reflect.ValueOf(v))
	}
	return nil, valueErr(t, v)
}

func valueErr(t *Type, v any) error {
	return fmt.Errorf("%w: %T for %s", ErrValue, v, t)
}

// encodeNative encodes the native types; ok is false when t is not one
// or v is not a Go type it takes.
func encodeNative(id TypeID, v any) ([]byte, bool, error) {
	switch id {
	case TypeASCII, TypeVarchar:
		s, ok := v.(string)
		if ok && id == TypeASCII && strings.ContainsFunc(s, func(r rune) bool { return r > 127 }) {
			return nil, true, fmt.Errorf("%w: %q is not ascii", ErrValue, s)
		}
		if ok && !utf8.ValidString(s) {
			return nil, true, fmt.Errorf("%w: %q is not UTF-8", ErrValue, s)
		}
		return []byte(s), ok, nil
	case TypeInt:
		return encodeInt(v, 4)
	case TypeBigint, TypeCounter:
		return encodeInt(v, 8)
	case TypeBoolean:
		b, ok := v.(bool)
		return []byte{boolByte(b)}, ok, nil
	case TypeUUID, TypeTimeUUID:
		u, ok := v.([16]byte)
		return u[:], ok, nil
	case TypeDouble:
		f, ok := v.(float64)
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(f)), ok, nil
	case TypeFloat:
		f, ok := v.(float32)
		return binary.BigEndian.AppendUint32(nil, math.Float32bits(f)), ok, nil
	case TypeBlob:
		b, ok := v.([]byte)
		return slices.Clone(b), ok, nil
	case TypeTimestamp:
		if tm, ok := v.(time.Time); ok {
			return binary.BigEndian.AppendUint64(nil, uint64(tm.UnixMilli())), true, nil
		}
		return encodeInt(v, 8)
	case TypeInet:
		a, ok := v.(netip.Addr)
		if !ok {
			return nil, false, nil
		}
		if !a.IsValid() {
			return nil, true, fmt.Errorf("%w: invalid inet address", ErrValue)
		}
		return AppendInetAddr(nil, a)[1:], true, nil
	}
	return nil, false, nil
}

// encodeInt encodes an int32, int64 or int in size bytes; a value that
// does not fit is an error.
func encodeInt(v any, size int) ([]byte, bool, error) {
	var n int64
	switch x := v.(type) {
	case int32:
		n = int64(x)
	case int64:
		if size == 4 {
			return nil, false, nil
		}
		n = x
	case int:
		n = int64(x)
	default:
		return nil, false, nil
	}
	if size == 4 {
		if n != int64(int32(n)) {
			return nil, true, fmt.Errorf("%w: %d does not fit an int", ErrValue, n)
		}
		return binary.BigEndian.AppendUint32(nil, uint32(n)), true, nil
	}
	return binary.BigEndian.AppendUint64(nil, uint64(n)), true, nil
}

// encodeList encodes a slice as a list or a set: an [int] count, then
// each element as [bytes]. A set is sorted.
func encodeList(t *Type, rv reflect.Value) ([]byte, error) {
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return nil, valueErr(t, rv.Interface())
	}
	elems := make([]sortable, rv.Len())
	for i := range elems {
		e, err := encodeElem(t.Elems[0], rv.Index(i))
		if err != nil {
			return nil, err
		}
		elems[i] = e
	}
	if t.ID == TypeSet {
		sortElems(elems)
	}
	b := AppendInt(nil, int32(len(elems)))
	for _, e := range elems {
		b = AppendBytes(b, e.enc)
	}
	return b, nil
}

// encodeMap encodes a map: an [int] count, then each key and value as
// [bytes], sorted by key.
func encodeMap(t *Type, rv reflect.Value) ([]byte, error) {
	if rv.Kind() != reflect.Map {
		return nil, valueErr(t, rv.Interface())
	}
	type entry struct{ k, v sortable }
	entries := make([]entry, 0, rv.Len())
	for it := rv.MapRange(); it.Next(); {
		k, err := encodeElem(t.Elems[0], it.Key())
		if err != nil {
			return nil, err
		}
		v, err := encodeElem(t.Elems[1], it.Value())
		if err != nil {
			return nil, err
		}
		entries = append(entries, entry{k, v})
	}
	slices.SortFunc(entries, func(a, b entry) int { return compareElems(a.k, b.k) })
	b := AppendInt(nil, int32(len(entries)))
	for _, e := range entries {
		b = AppendBytes(AppendBytes(b, e.k.enc), e.v.enc)
	}
	return b, nil
}

// sortable is an encoded element with what orders it.
type sortable struct {
	enc []byte
	key reflect.Value
}

func encodeElem(t *Type, rv reflect.Value) (sortable, error) {
	v := rv.Interface()
	if v == nil {
		return sortable{}, fmt.Errorf("%w: null element of a %s", ErrValue, t)
	}
	b, err := EncodeValue(t, v)
	if b == nil && err == nil {
		b = []byte{}
	}
	return sortable{enc: b, key: reflect.ValueOf(v)}, err
}

func sortElems(s []sortable) { slices.SortFunc(s, compareElems) }

func compareElems(a, b sortable) int {
	switch {
	case a.key.Kind() == reflect.String && b.key.Kind() == reflect.String:
		return strings.Compare(a.key.String(), b.key.String())
	case a.key.CanInt() && b.key.CanInt():
		return cmp.Compare(a.key.Int(), b.key.Int())
	}
	return slices.Compare(a.enc, b.enc)
}
