package schema

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/internal/cqltext"
)

// MaxNameLength is the longest keyspace, table, index or user type name,
// as in Cassandra.
const MaxNameLength = 48

// maxColumnNameLength bounds column names (Cassandra has no limit; this only
// keeps hostile input small).
const maxColumnNameLength = 1024

// ValidName reports whether name is a valid keyspace, table or index name:
// 1 to MaxNameLength characters of [A-Za-z0-9_].
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > MaxNameLength {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// nameReason says why name cannot name a what ("keyspace", "table",
// "index"), or returns "" when ValidName accepts it.
func nameReason(what, name string) string {
	if ValidName(name) {
		return ""
	}
	if name == "" {
		return what + " name is empty"
	}
	return what + " name " + clip.Quote(name) + " is invalid: it must be 1 to 48 characters of [A-Za-z0-9_]"
}

// columnNameReason says why name cannot name a what ("column" or
// "field"): any UTF-8 text is allowed, quoted, up to a bound on its length.
func columnNameReason(what, name string) string {
	switch {
	case name == "":
		return what + " name is empty"
	case len(name) > maxColumnNameLength:
		return what + " name is longer than " + strconv.Itoa(maxColumnNameLength) + " bytes"
	case !utf8.ValidString(name):
		return what + " name is not valid UTF-8"
	}
	return ""
}

// controlReason says why a new name of a what ("column", "field",
// "type") cannot hold a control character: a quoted name could carry a
// newline or a NUL, but no tool prints or types it back usefully (and
// Cassandra's drivers and cqlsh cannot either).
func controlReason(what, name string) string {
	i := strings.IndexFunc(name, unicode.IsControl)
	if i < 0 {
		return ""
	}
	r, _ := utf8.DecodeRuneInString(name[i:])
	return what + " name " + clip.Quote(name) + " contains a control character (" + fmt.Sprintf("%U", r) + ")"
}

// unprintableReason says why a new name of a what ("column", "field",
// "type", "function", ...) cannot hold a rune: a control character
// (controlReason), a bidirectional formatting character (U+202A–U+202E,
// U+2066–U+2069, the marks U+200E, U+200F, U+061C), which reorders how
// the name and what follows it show, or a line or paragraph separator
// (U+2028, U+2029), which some tools break lines at. It returns "" when
// the name holds none of them.
func unprintableReason(what, name string) string {
	if r := controlReason(what, name); r != "" {
		return r
	}
	i := strings.IndexFunc(name, isBidiOrSeparator)
	if i < 0 {
		return ""
	}
	r, _ := utf8.DecodeRuneInString(name[i:])
	kind := "a bidirectional formatting character"
	if r == 0x2028 || r == 0x2029 {
		kind = "a line or paragraph separator"
	}
	return what + " name " + clip.Quote(name) + " contains " + kind + " (" + fmt.Sprintf("%U", r) +
		"), which would make it show as another name; choose a name without it"
}

// isBidiOrSeparator reports whether r is a bidirectional formatting
// character or a line or paragraph separator (see unprintableReason).
func isBidiOrSeparator(r rune) bool {
	switch r {
	case 0x061c, 0x200e, 0x200f, 0x2028, 0x2029:
		return true
	}
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// IsReservedKeyspaceName reports whether name is reserved for Cassandra's
// system keyspaces: "system" or any name starting with "system_", in any
// case.
func IsReservedKeyspaceName(name string) bool {
	lower := strings.ToLower(name)
	return lower == "system" || strings.HasPrefix(lower, "system_")
}

// keyspaceNameReason is nameReason for a keyspace being created, which must
// also not be reserved.
func keyspaceNameReason(name string) string {
	if r := nameReason("keyspace", name); r != "" {
		return r
	}
	if IsReservedKeyspaceName(name) {
		return "keyspace name " + clip.String(name) + " is reserved for system keyspaces"
	}
	return ""
}

// Names in messages. Every message that names a schema object spells it
// as CQL does, so that what a message or the CLI prints can be pasted
// back into a statement or a command: a name that is mixed case, reserved
// or holds other characters than lowercase letters, digits and _ comes in
// double quotes ("KsMixed".tb31), the others as they are.

// qualify is cqltext.QuoteQualified.
func qualify(ks, name string) string { return cqltext.QuoteQualified(ks, name) }

// quoteNonEmpty is cqltext.QuoteIdentifier, except that an empty name
// stays empty (a statement that names no object).
func quoteNonEmpty(name string) string { return cqltext.QuoteQualified("", name) }

// QuoteTypeName returns a user type's name as CQL needs it: quoted as
// QuoteIdentifier does, and also when it is a native type's name or a
// type constructor's (list, frozen, ...), which CQL reads as that type
// unless quoted.
func QuoteTypeName(name string) string { return quoteTypeName(name) }

// qualifyType is qualify for a user type.
func qualifyType(ks, name string) string {
	if ks == "" {
		return quoteTypeName(name)
	}
	return cqltext.QuoteIdentifier(ks) + "." + quoteTypeName(name)
}

// qualifySignature is qualify for a function signature.
func qualifySignature(ks, sig string) string {
	if ks == "" {
		return cqltext.QuoteSignature(sig)
	}
	return cqltext.QuoteIdentifier(ks) + "." + cqltext.QuoteSignature(sig)
}
