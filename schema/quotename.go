package schema

import "strings"

// Names in messages. Every message that names a schema object spells it
// as CQL does, so that what a message or the CLI prints can be pasted
// back into a statement or a command: a name that is mixed case, reserved
// or holds other characters than lowercase letters, digits and _ comes in
// double quotes ("KsMixed".tb31), the others as they are.

// QuoteQualified returns ks.name with each part quoted as CQL needs
// (QuoteIdentifier); name alone when ks is empty.
func QuoteQualified(ks, name string) string { return qualify(ks, name) }

// qualify is QuoteQualified.
func qualify(ks, name string) string {
	if ks == "" {
		return quoteNonEmpty(name)
	}
	return QuoteIdentifier(ks) + "." + quoteNonEmpty(name)
}

// quoteNonEmpty is QuoteIdentifier, except that an empty name stays
// empty (a statement that names no object).
func quoteNonEmpty(name string) string {
	if name == "" {
		return ""
	}
	return QuoteIdentifier(name)
}

// QuoteTypeName returns a user type's name as CQL needs it: quoted as
// QuoteIdentifier does, and also when it is a native type's name or a
// type constructor's (list, frozen, ...), which CQL reads as that type
// unless quoted.
func QuoteTypeName(name string) string { return quoteTypeName(name) }

// qualifyType is QuoteQualified for a user type.
func qualifyType(ks, name string) string {
	if ks == "" {
		return quoteTypeName(name)
	}
	return QuoteIdentifier(ks) + "." + quoteTypeName(name)
}

// QuoteSignature returns a function or aggregate signature,
// "name(type,...)" as FunctionSignature makes it, with the name quoted as
// CQL needs (the types are CQL text already); text without parentheses
// is quoted as one name.
func QuoteSignature(sig string) string {
	name, args, ok := strings.Cut(sig, "(")
	if !ok {
		return quoteNonEmpty(sig)
	}
	return quoteNonEmpty(name) + "(" + args
}

// qualifySignature is QuoteQualified for a function signature.
func qualifySignature(ks, sig string) string {
	if ks == "" {
		return QuoteSignature(sig)
	}
	return QuoteIdentifier(ks) + "." + QuoteSignature(sig)
}
