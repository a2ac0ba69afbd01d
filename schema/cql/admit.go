package cql

import (
	"errors"
	"strconv"

	"github.com/metalog/metalog/schema"
)

// Admit checks the admission rules of p, a statement of a new request
// (schema.Admit), and points at what they refuse: a new name holding a
// control or bidirectional formatting character is refused with a
// *NameError giving the line and column, in the text p was parsed from,
// of the quoted identifier that wrote it. Other refusals are schema.Admit's
// errors as they are. Like schema.Admit it runs before a request is
// proposed, never when the log applies an entry.
func Admit(p Parsed) error {
	err := schema.Admit(p.Statement)
	if err == nil {
		return nil // before errors.As, whose target escapes: the pre-check of every DDL passes here
	}
	var une *schema.UnprintableNameError
	if !errors.As(err, &une) {
		return err
	}
	line, col, ok := quotedAt(p.Text, une.Name)
	if !ok {
		return err
	}
	if line == 1 {
		col += p.Column - 1
	}
	return &NameError{Line: p.Line + line - 1, Column: col, Err: err}
}

// quotedAt returns the line and column (1-based) in text of the first
// quoted identifier whose value is name.
func quotedAt(text, name string) (line, col int, ok bool) {
	toks, err := lex(text)
	if err != nil {
		return 0, 0, false
	}
	for _, t := range toks {
		if t.kind == tokQuoted && t.val == name {
			return t.line, t.col, true
		}
	}
	return 0, 0, false
}

// NameError is a name of a statement refused by an admission rule, with
// where it is written: Admit's error for a quoted identifier that holds a
// control or bidirectional formatting character. Unwrap gives the
// *schema.UnprintableNameError, which matches schema.ErrInvalid.
type NameError struct {
	// Line and Column locate the quoted identifier's opening quote
	// (1-based; the column in characters).
	Line, Column int
	// Err is the refusal, naming the statement, the object and the name.
	Err error
}

// Error returns e.g. `line 1:42: CREATE TABLE shop.t: column name
// "total\u202e" contains a bidirectional formatting character (U+202E),
// which would make it show as another name; choose a name without it`.
func (e *NameError) Error() string {
	return "line " + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column) + ": " + e.Err.Error()
}

// Unwrap returns Err.
func (e *NameError) Unwrap() error { return e.Err }
