package schema

import (
	"encoding/hex"
	"strconv"
	"strings"
)

// The Option readers parse the canonical CQL literal text a Table's
// Options hold (see table_properties.go) back into values, for readers
// that present options as typed values, such as the system_schema tables.
// Each reports false when text is not a literal of the kind asked for.

// OptionString returns the value of a string literal, its quotes removed
// and doubled quotes undone.
func OptionString(text string) (string, bool) {
	v, r := parsePropValue(text)
	return v.text, r == "" && v.kind == 's'
}

// OptionNumber returns the value of a number literal (or of a string
// holding one, as Cassandra reads property values).
func OptionNumber(text string) (float64, bool) {
	v, r := parsePropValue(text)
	if r != "" {
		return 0, false
	}
	return v.number()
}

// OptionBool returns the value of true or false (or of a string holding
// one, in any case).
func OptionBool(text string) (bool, bool) {
	v, r := parsePropValue(text)
	if r != "" || (v.kind != 'b' && v.kind != 's') {
		return false, false
	}
	switch strings.ToLower(v.text) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// OptionMap returns the entries of a map literal whose keys are strings
// and whose values are strings, numbers or booleans, each value as its
// text (caching, compaction, compression).
func OptionMap(text string) (map[string]string, bool) {
	v, r := parsePropValue(text)
	if r != "" {
		return nil, false
	}
	m, r := stringMap(v)
	return m, r == ""
}

// OptionBlobMap returns the entries of a map literal of strings to blobs
// (extensions), each blob decoded from its 0x hex text.
func OptionBlobMap(text string) (map[string][]byte, bool) {
	v, r := parsePropValue(text)
	if r != "" || v.kind != 'm' {
		return nil, false
	}
	m := make(map[string][]byte, len(v.entries))
	for _, e := range v.entries {
		if e.kkind != 's' || e.value.kind != 'x' {
			return nil, false
		}
		b, err := hex.DecodeString(e.value.text[2:])
		if err != nil {
			return nil, false
		}
		m[e.key] = b
	}
	return m, true
}

// OptionInt returns the value of an integer literal that fits in 32
// bits (or of a string holding one).
func OptionInt(text string) (int32, bool) {
	v, r := parsePropValue(text)
	if r != "" || (v.kind != 'n' && v.kind != 's') {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v.text), 10, 32)
	return int32(n), err == nil
}
