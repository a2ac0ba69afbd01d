package wire

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"
	"time"
)

// TestEncodeValue checks each type against its serialization in section
// 6 of the v4 spec, the bytes written by hand.
func TestEncodeValue(t *testing.T) {
	text, blob, integer := Native(TypeVarchar), Native(TypeBlob), Native(TypeInt)
	uuid := [16]byte{0x5a, 0x1c, 0x39, 0x5e, 0xb4, 0x1f, 0x11, 0xe5, 0x9f, 0x3c, 0x2b, 0x1f, 0xb9, 0xe8, 0x6c, 0x01}
	cases := []struct {
		name string
		t    *Type
		v    any
		want []byte
	}{
		{"text", text, "héllo", []byte("héllo")},
		{"ascii", Native(TypeASCII), "abc", []byte("abc")},
		{"empty text", text, "", []byte{}},
		{"null", text, nil, nil},
		{"int", integer, int32(-2), []byte{0xFF, 0xFF, 0xFF, 0xFE}},
		{"int from int", integer, 258, []byte{0, 0, 1, 2}},
		{"bigint", Native(TypeBigint), int64(1) << 40, []byte{0, 0, 1, 0, 0, 0, 0, 0}},
		{"boolean", Native(TypeBoolean), true, []byte{1}},
		{"uuid", Native(TypeUUID), uuid, uuid[:]},
		{"timeuuid", Native(TypeTimeUUID), uuid, uuid[:]},
		{"double", Native(TypeDouble), 1.5, []byte{0x3F, 0xF8, 0, 0, 0, 0, 0, 0}},
		{"float", Native(TypeFloat), float32(-2), []byte{0xC0, 0, 0, 0}},
		{"blob", blob, []byte{0xCA, 0xFE}, []byte{0xCA, 0xFE}},
		{"timestamp", Native(TypeTimestamp), time.UnixMilli(1000).UTC(), []byte{0, 0, 0, 0, 0, 0, 0x03, 0xE8}},
		{"timestamp ms", Native(TypeTimestamp), int64(-1), bytes.Repeat([]byte{0xFF}, 8)},
		{"inet4", Native(TypeInet), netip.MustParseAddr("127.0.0.1"), []byte{127, 0, 0, 1}},
		{"inet6", Native(TypeInet), netip.MustParseAddr("::1"), append(make([]byte, 15), 1)},
		{"list<text>", ListOf(text), []string{"b", "a"},
			[]byte{0, 0, 0, 2, 0, 0, 0, 1, 'b', 0, 0, 0, 1, 'a'}},
		{"set<text> sorted", SetOf(text), []string{"b", "a"},
			[]byte{0, 0, 0, 2, 0, 0, 0, 1, 'a', 0, 0, 0, 1, 'b'}},
		{"frozen<list<text>> empty", ListOf(text), []string{}, []byte{0, 0, 0, 0}},
		{"map<text,text> sorted", MapOf(text, text), map[string]string{"z": "1", "a": "2"},
			[]byte{0, 0, 0, 2, 0, 0, 0, 1, 'a', 0, 0, 0, 1, '2', 0, 0, 0, 1, 'z', 0, 0, 0, 1, '1'}},
		{"map<text,blob>", MapOf(text, blob), map[string][]byte{"k": {}},
			[]byte{0, 0, 0, 1, 0, 0, 0, 1, 'k', 0, 0, 0, 0}},
		{"list<int>", ListOf(integer), []int32{1, -1},
			[]byte{0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 4, 0xFF, 0xFF, 0xFF, 0xFF}},
		{"set<int> numeric order", SetOf(integer), []int32{1, -1},
			[]byte{0, 0, 0, 2, 0, 0, 0, 4, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 4, 0, 0, 0, 1}},
		{"list<list<text>>", ListOf(ListOf(text)), [][]string{{"x"}},
			[]byte{0, 0, 0, 1, 0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 1, 'x'}},
	}
	for _, c := range cases {
		got, err := EncodeValue(c.t, c.v)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !bytes.Equal(got, c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("%s: got % x, want % x", c.name, got, c.want)
		}
	}
}

func TestEncodeValueRefusals(t *testing.T) {
	cases := []struct {
		name string
		t    *Type
		v    any
	}{
		{"int for text", Native(TypeVarchar), 1},
		{"non-ascii", Native(TypeASCII), "é"},
		{"bad utf-8", Native(TypeVarchar), "\xff"},
		{"int overflow", Native(TypeInt), int64(1) << 40},
		{"int too wide", Native(TypeInt), 1 << 40},
		{"string for uuid", Native(TypeUUID), "5a1c395e"},
		{"zero inet", Native(TypeInet), netip.Addr{}},
		{"map for list", ListOf(Native(TypeInt)), map[string]string{}},
		{"null element", ListOf(Native(TypeVarchar)), []any{"a", nil}},
		{"wrong element", ListOf(Native(TypeVarchar)), []int{1}},
		{"decimal", Native(TypeDecimal), 1.5},
	}
	for _, c := range cases {
		if _, err := EncodeValue(c.t, c.v); !errors.Is(err, ErrValue) {
			t.Errorf("%s: err = %v, want ErrValue", c.name, err)
		}
	}
}
