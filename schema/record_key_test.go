package schema

import (
	"errors"
	"testing"
)

// TestRecordKeyRejectsBadHeaders: input that is not a record, or whose
// names are cut short or not UTF-8, is an error matching ErrInvalid.
func TestRecordKeyRejectsBadHeaders(t *testing.T) {
	table := AppendTable(nil, &Table{Keyspace: "ks", Name: "t", ID: TableID(1, 0)})
	for _, tt := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"one byte", []byte{EncodingVersion}},
		{"unknown kind", []byte{EncodingVersion, 'Z', 0}},
		{"other version", append([]byte{EncodingVersion + 1}, table[1:]...)},
		{"name cut short", table[:6]},
		{"name not UTF-8", []byte{EncodingVersion, recordKeyspace, 1, 0xff}},
		{"bad function", []byte{EncodingVersion, recordFunction, 9}},
	} {
		if _, _, err := RecordKey(tt.b); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want an error matching ErrInvalid", tt.name, err)
		}
	}
	ks, name, err := RecordKey(table)
	if err != nil || string(ks) != "ks" || string(name) != "t" {
		t.Fatalf("RecordKey(table) = %q, %q, %v", ks, name, err)
	}
}
