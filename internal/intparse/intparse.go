package intparse

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrSyntax is matched (errors.Is) by the error for text that is not an
// integer at all.
var ErrSyntax = errors.New("not an integer")

// ErrRange is matched (errors.Is) by the error for an integer that does not
// fit; the message says the bound it passed.
var ErrRange = errors.New("out of range")

// Int is strconv.ParseInt(s, base, bits) with the errors of this package.
func Int(s string, base, bits int) (int64, error) {
	n, err := strconv.ParseInt(s, base, bits)
	if err == nil {
		return n, nil
	}
	if !errors.Is(err, strconv.ErrRange) {
		return 0, ErrSyntax
	}
	if strings.HasPrefix(s, "-") {
		return n, fmt.Errorf("%w (at least %d)", ErrRange, n)
	}
	return n, fmt.Errorf("%w (at most %d)", ErrRange, n)
}

// Uint is strconv.ParseUint(s, base, bits) with the errors of this
// package; a negative integer is out of range, not a syntax error.
func Uint(s string, base, bits int) (uint64, error) {
	n, err := strconv.ParseUint(s, base, bits)
	if err == nil {
		return n, nil
	}
	if errors.Is(err, strconv.ErrRange) {
		return n, fmt.Errorf("%w (at most %d)", ErrRange, n)
	}
	if rest, neg := strings.CutPrefix(s, "-"); neg && rest != "" {
		if _, err := strconv.ParseUint(rest, base, 64); err == nil || errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("%w (at least 0)", ErrRange)
		}
	}
	return 0, ErrSyntax
}
