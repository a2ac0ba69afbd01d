package wire

import (
	"errors"
	"net/netip"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestNotationRoundTrip writes every notation type and reads it back.
func TestNotationRoundTrip(t *testing.T) {
	uuid := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	v4 := netip.MustParseAddrPort("10.0.0.7:9042")
	v6 := netip.MustParseAddrPort("[2001:db8::1]:19042")
	var b []byte
	b = AppendByte(b, 0xAB)
	b = AppendShort(b, 0xFFFE)
	b = AppendInt(b, -7)
	b = AppendLong(b, -1<<40)
	b = AppendString(b, "système")
	b = AppendLongString(b, "SELECT * FROM t")
	b = AppendUUID(b, uuid)
	b = AppendStringList(b, []string{"a", "", "ccc"})
	b = AppendBytes(b, []byte{9, 8})
	b = AppendBytes(b, nil)
	b = AppendBytes(b, []byte{})
	b = AppendValue(b, Value{Bytes: []byte{1}})
	b = AppendValue(b, Value{Null: true})
	b = AppendValue(b, Value{Unset: true})
	b = AppendShortBytes(b, []byte{7, 7, 7})
	b = AppendConsistency(b, LocalQuorum)
	b = AppendInet(b, v4)
	b = AppendInet(b, v6)
	b = AppendStringMap(b, map[string]string{"CQL_VERSION": "3.0.0", "COMPRESSION": "lz4"})
	b = AppendStringMultimap(b, map[string][]string{"PROTOCOL_VERSIONS": {"4/v4", "5/v5"}, "E": nil})
	b = AppendBytesMap(b, map[string][]byte{"k": {1}, "n": nil})
	typ := MapOf(Native(TypeVarchar), ListOf(TupleOf(Native(TypeInt), SetOf(Native(TypeUUID)))))
	b = AppendOption(b, typ)

	d := NewDecoder(b)
	checks := []struct {
		name      string
		got, want any
	}{
		{"byte", d.Byte(), byte(0xAB)},
		{"short", d.Short(), uint16(0xFFFE)},
		{"int", d.Int(), int32(-7)},
		{"long", d.Long(), int64(-1 << 40)},
		{"string", d.Str(), "système"},
		{"long string", d.LongString(), "SELECT * FROM t"},
		{"uuid", d.UUID(), uuid},
		{"string list", d.StringList(), []string{"a", "", "ccc"}},
		{"bytes", d.Bytes(), []byte{9, 8}},
		{"null bytes", d.Bytes(), []byte(nil)},
		{"empty bytes", d.Bytes(), []byte{}},
		{"value", d.Value(), Value{Bytes: []byte{1}}},
		{"null value", d.Value(), Value{Null: true}},
		{"unset value", d.Value(), Value{Unset: true}},
		{"short bytes", d.ShortBytes(), []byte{7, 7, 7}},
		{"consistency", d.Consistency(), LocalQuorum},
		{"inet4", d.Inet(), v4},
		{"inet6", d.Inet(), v6},
		{"string map", d.StringMap(), map[string]string{"CQL_VERSION": "3.0.0", "COMPRESSION": "lz4"}},
		{"string multimap", d.StringMultimap(), map[string][]string{"PROTOCOL_VERSIONS": {"4/v4", "5/v5"}, "E": nil}},
		{"bytes map", d.BytesMap(), map[string][]byte{"k": {1}, "n": nil}},
		{"option", d.Option(), typ},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, c.got, cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", c.name, diff)
		}
	}
	if d.Err() != nil || d.Remaining() != 0 {
		t.Fatalf("err %v, %d bytes left", d.Err(), d.Remaining())
	}
	if got := typ.String(); got != "map<text, list<tuple<int, set<uuid>>>>" {
		t.Errorf("type spelled %q", got)
	}
}

// TestLyingLengths gives each length-prefixed type a length that is
// negative, too long or past the body, and expects an error, no panic
// and no allocation of the lied size.
func TestLyingLengths(t *testing.T) {
	cases := []struct {
		name string
		body []byte
		read func(*Decoder)
		want error
	}{
		{"string past end", []byte{0, 5, 'a'}, func(d *Decoder) { d.Str() }, ErrShortBody},
		{"long string negative", []byte{0xFF, 0xFF, 0xFF, 0xFE}, func(d *Decoder) { d.LongString() }, ErrBadLength},
		{"long string huge", []byte{0x7F, 0xFF, 0xFF, 0xFF, 'x'}, func(d *Decoder) { d.LongString() }, ErrShortBody},
		{"bytes huge", []byte{0x7F, 0xFF, 0xFF, 0xFF}, func(d *Decoder) { d.Bytes() }, ErrShortBody},
		{"value -3", []byte{0xFF, 0xFF, 0xFF, 0xFD}, func(d *Decoder) { d.Value() }, ErrBadLength},
		{"value past end", []byte{0, 0, 0, 3, 1}, func(d *Decoder) { d.Value() }, ErrShortBody},
		{"short bytes past end", []byte{0xFF, 0xFF}, func(d *Decoder) { d.ShortBytes() }, ErrShortBody},
		{"string list count", []byte{0xFF, 0xFF, 0, 0}, func(d *Decoder) { d.StringList() }, ErrShortBody},
		{"string map count", []byte{0xFF, 0xFF}, func(d *Decoder) { d.StringMap() }, ErrShortBody},
		{"multimap count", []byte{0x10, 0x00, 0, 0, 0, 0}, func(d *Decoder) { d.StringMultimap() }, ErrShortBody},
		{"bytes map count", []byte{0x00, 0x02, 0, 0, 0, 0, 0, 0}, func(d *Decoder) { d.BytesMap() }, ErrShortBody},
		{"bytes map value past end", []byte{0, 1, 0, 1, 'k', 0, 0, 1, 0}, func(d *Decoder) { d.BytesMap() }, ErrShortBody},
		{"inet size 5", []byte{5, 1, 2, 3, 4, 5, 0, 0, 0, 1}, func(d *Decoder) { d.Inet() }, ErrBadLength},
		{"inet port negative", []byte{4, 1, 2, 3, 4, 0xFF, 0xFF, 0xFF, 0xFF}, func(d *Decoder) { d.Inet() }, ErrBadLength},
		{"uuid short", []byte{1, 2, 3}, func(d *Decoder) { d.UUID() }, ErrShortBody},
		{"int short", []byte{1, 2, 3}, func(d *Decoder) { d.Int() }, ErrShortBody},
		{"long short", []byte{1, 2, 3}, func(d *Decoder) { d.Long() }, ErrShortBody},
		{"tuple count", []byte{0, 0x31, 0xFF, 0xFF}, func(d *Decoder) { d.Option() }, ErrShortBody},
		{"unknown type", []byte{0, 0x0A}, func(d *Decoder) { d.Option() }, ErrMalformed},
		{"deep type", deepList(100), func(d *Decoder) { d.Option() }, ErrBadLength},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d *Decoder
			n := allocated(func() { d = NewDecoder(c.body); c.read(d) })
			if !errors.Is(d.Err(), c.want) {
				t.Fatalf("err = %v, want %v", d.Err(), c.want)
			}
			if limit := allocBound(len(c.body)); n > limit {
				t.Errorf("%d bytes allocated reading %d bytes (bound %d)", n, len(c.body), limit)
			}
			// The error sticks: later reads return zero values.
			if d.Int() != 0 || d.Str() != "" || d.Err() == nil {
				t.Errorf("reads after an error did not stay failed")
			}
		})
	}
}

func deepList(n int) []byte {
	var b []byte
	for range n {
		b = AppendShort(b, uint16(TypeList))
	}
	return AppendShort(b, uint16(TypeInt))
}

// equateEmpty is the comparison of the round trips: empty equals nil,
// addresses compare as values.
var equateEmpty = cmp.Options{cmpopts.EquateEmpty(), cmpopts.EquateComparable(netip.Addr{}, netip.AddrPort{})}

// allocated returns the bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// allocBound is what decoding n hostile bytes may allocate: a fixed
// allowance plus a small multiple of the input (a type node per two
// bytes, map buckets), never the sizes the input claims.
func allocBound(n int) uint64 { return 16<<10 + 128*uint64(n) }
