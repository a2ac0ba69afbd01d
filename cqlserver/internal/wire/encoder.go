package wire

import (
	"encoding/binary"
	"net/netip"
	"sort"
	"strconv"
)

// The Append functions write the protocol's notation types at the end of
// a buffer and return it, in the style of strconv.AppendInt. A string or
// collection too long for its length prefix is a broken invariant of the
// caller (names and lists of a schema are far shorter), and they panic
// with the length.

// AppendByte appends a [byte].
func AppendByte(b []byte, v byte) []byte { return append(b, v) }

// AppendShort appends a [short].
func AppendShort(b []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(b, v) }

// AppendInt appends an [int].
func AppendInt(b []byte, v int32) []byte { return binary.BigEndian.AppendUint32(b, uint32(v)) }

// AppendLong appends a [long].
func AppendLong(b []byte, v int64) []byte { return binary.BigEndian.AppendUint64(b, uint64(v)) }

func shortLen(n int, what string) uint16 {
	if n > 0xFFFF {
		panic("cql wire: " + what + " longer than a [short] can count: " + strconv.Itoa(n))
	}
	return uint16(n)
}

// AppendString appends a [string].
func AppendString(b []byte, s string) []byte {
	b = AppendShort(b, shortLen(len(s), "[string]"))
	return append(b, s...)
}

// AppendLongString appends a [long string].
func AppendLongString(b []byte, s string) []byte {
	b = AppendInt(b, int32(len(s)))
	return append(b, s...)
}

// AppendUUID appends a [uuid].
func AppendUUID(b []byte, u [16]byte) []byte { return append(b, u[:]...) }

// AppendStringList appends a [string list].
func AppendStringList(b []byte, l []string) []byte {
	b = AppendShort(b, shortLen(len(l), "[string list]"))
	for _, s := range l {
		b = AppendString(b, s)
	}
	return b
}

// AppendBytes appends a [bytes]; nil is null (length -1), an empty
// non-nil slice is empty.
func AppendBytes(b []byte, v []byte) []byte {
	if v == nil {
		return AppendInt(b, -1)
	}
	b = AppendInt(b, int32(len(v)))
	return append(b, v...)
}

// AppendValue appends a [value].
func AppendValue(b []byte, v Value) []byte {
	switch {
	case v.Null:
		return AppendInt(b, -1)
	case v.Unset:
		return AppendInt(b, -2)
	}
	b = AppendInt(b, int32(len(v.Bytes)))
	return append(b, v.Bytes...)
}

// AppendShortBytes appends a [short bytes].
func AppendShortBytes(b []byte, v []byte) []byte {
	b = AppendShort(b, shortLen(len(v), "[short bytes]"))
	return append(b, v...)
}

// AppendConsistency appends a [consistency].
func AppendConsistency(b []byte, c Consistency) []byte { return AppendShort(b, uint16(c)) }

// AppendInetAddr appends an [inetaddr]: 4 bytes for an IPv4 address
// (also when written as IPv4-in-IPv6), else 16.
func AppendInetAddr(b []byte, a netip.Addr) []byte {
	a = a.Unmap()
	if a.Is4() {
		v := a.As4()
		return append(append(b, 4), v[:]...)
	}
	v := a.As16()
	return append(append(b, 16), v[:]...)
}

// AppendInet appends an [inet]: an [inetaddr] and an [int] port.
func AppendInet(b []byte, ap netip.AddrPort) []byte {
	b = AppendInetAddr(b, ap.Addr())
	return AppendInt(b, int32(ap.Port()))
}

// sortedKeys returns m's keys in order, so that encodings are
// deterministic.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// AppendStringMap appends a [string map], keys in sorted order.
func AppendStringMap(b []byte, m map[string]string) []byte {
	b = AppendShort(b, shortLen(len(m), "[string map]"))
	for _, k := range sortedKeys(m) {
		b = AppendString(AppendString(b, k), m[k])
	}
	return b
}

// AppendStringMultimap appends a [string multimap], keys in sorted order.
func AppendStringMultimap(b []byte, m map[string][]string) []byte {
	b = AppendShort(b, shortLen(len(m), "[string multimap]"))
	for _, k := range sortedKeys(m) {
		b = AppendStringList(AppendString(b, k), m[k])
	}
	return b
}

// AppendBytesMap appends a [bytes map], keys in sorted order.
func AppendBytesMap(b []byte, m map[string][]byte) []byte {
	b = AppendShort(b, shortLen(len(m), "[bytes map]"))
	for _, k := range sortedKeys(m) {
		b = AppendBytes(AppendString(b, k), m[k])
	}
	return b
}
