package access

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/metalog/metalog/internal/safetext"
)

// MaxNameLen is the longest name CheckName accepts, in bytes.
const MaxNameLen = 64

// NameRule says what CheckName accepts, for messages and help texts.
const NameRule = "a name is 1 to 64 bytes of UTF-8 without ',', '=', whitespace, control or bidirectional formatting characters, and does not start with '#'"

// ErrBadName is the error CheckName wraps.
var ErrBadName = errors.New("bad name")

// CheckName checks a name that identifies a member (serve --name, the
// names of --initial-cluster, cluster add --name) or the holder of a
// bearer token (token new --name, the first field of an auth_token_file
// line). One rule for both, because both are written where a separator
// would break them: ',' and '=' split --initial-cluster, whitespace
// splits a token file line, a leading '#' makes that line a comment, and
// control and bidirectional formatting characters (safetext.Unsafe) would
// act on the terminal that shows the name in a table or as a change's
// principal instead of showing. The error wraps ErrBadName
// and says which character is refused and where; the caller adds which
// flag or file gave the name.
func CheckName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty (%s)", ErrBadName, NameRule)
	case len(name) > MaxNameLen:
		return fmt.Errorf("%w: %.20q... is %d bytes long (%s)", ErrBadName, name, len(name), NameRule)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: %q is not valid UTF-8 (%s)", ErrBadName, name, NameRule)
	case name[0] == '#':
		return fmt.Errorf("%w: %q starts with '#' (%s)", ErrBadName, name, NameRule)
	}
	for i, r := range name {
		if r == ',' || r == '=' || unicode.IsSpace(r) || safetext.Unsafe(r) {
			return fmt.Errorf("%w: %q has %q at byte %d (%s)", ErrBadName, name, r, i+1, NameRule)
		}
	}
	return nil
}
