package main

import (
	"errors"
	"fmt"
	"strings"
)

// parseNameArg reads the keyspace or keyspace.table argument of command
// (describe, watch, history) as CQL names: unquoted names are lowercased,
// "Quoted" ones keep their case (and may hold dots), and "" in a quoted
// name is a quote, so that the spelling describe prints,
// shop."MixedCase", finds the table.
func parseNameArg(command, arg string) (keyspace, table string, err error) {
	names, err := splitNames(arg)
	switch {
	case err != nil:
	case len(names) > 2:
		err = fmt.Errorf("%d names", len(names))
	case len(names) == 2:
		return names[0], names[1], nil
	default:
		return names[0], "", nil
	}
	return "", "", fmt.Errorf("%s %q: %v; want keyspace or keyspace.table, as CQL names (unquoted ones are lowercased, \"Quoted\" ones keep their case)", command, arg, err)
}

// nameArgs reads the optional keyspace[.table] argument of command; none
// means everything.
func nameArgs(command string, args []string) (keyspace, table string, err error) {
	if len(args) == 0 {
		return "", "", nil
	}
	return parseNameArg(command, args[0])
}

// splitNames splits s into the CQL names it holds, separated by dots.
func splitNames(s string) ([]string, error) {
	var names []string
	for {
		name, rest, err := cutName(s)
		if err != nil {
			return nil, err
		}
		names = append(names, name)
		if rest == "" {
			return names, nil
		}
		if rest[0] != '.' {
			return nil, fmt.Errorf("%q after the name %q", rest, name)
		}
		s = rest[1:]
	}
}

// cutName reads one CQL name at the start of s and returns it and what
// follows it.
func cutName(s string) (name, rest string, err error) {
	if quoted, ok := strings.CutPrefix(s, `"`); ok {
		var b strings.Builder
		for i := 0; i < len(quoted); i++ {
			switch {
			case quoted[i] != '"':
				b.WriteByte(quoted[i])
			case i+1 < len(quoted) && quoted[i+1] == '"':
				b.WriteByte('"')
				i++
			case b.Len() == 0:
				return "", "", errors.New(`an empty quoted name`)
			default:
				return b.String(), quoted[i+1:], nil
			}
		}
		return "", "", errors.New("a quoted name without its closing quote")
	}
	n := 0
	for n < len(s) && isNameByte(s[n]) {
		n++
	}
	if n == 0 {
		if s == "" || s[0] == '.' {
			return "", "", errors.New("a name missing")
		}
		return "", "", fmt.Errorf("%q is not a name (unquoted names hold letters, digits and _)", s)
	}
	return strings.ToLower(s[:n]), s[n:], nil
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}
