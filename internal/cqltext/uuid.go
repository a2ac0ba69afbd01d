package cqltext

import "strings"

// CanonicalUUID returns s as lowercase hyphenated UUID text, or false if s
// is not hyphenated UUID text (in either case).
func CanonicalUUID(s string) (string, bool) {
	if !uuidShape(s, true) {
		return "", false
	}
	return strings.ToLower(s), true
}

// IsCanonicalUUID reports whether s is lowercase hyphenated UUID text,
// what CanonicalUUID returns, without building it.
func IsCanonicalUUID(s string) bool { return uuidShape(s, false) }

// uuidShape reports whether s is 36 bytes of hex digits with hyphens at
// 8, 13, 18 and 23; the digits in either case when upper is set, in
// lower case otherwise.
func uuidShape(s string, upper bool) bool {
	if len(s) != 36 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (!upper || c < 'A' || c > 'F') {
				return false
			}
		}
	}
	return true
}

// uuidAt reports whether s starts with a UUID in canonical form, which
// may start with digits (and read as a number or a duration otherwise).
func uuidAt(s string) bool {
	if len(s) < 36 || len(s) > 36 && IsWordByte(s[36]) {
		return false
	}
	return IsCanonicalUUID(s[:36])
}
