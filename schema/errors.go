package schema

import (
	"errors"

	"github.com/metalog/metalog/internal/clip"
)

// ErrAlreadyExists is the code of an error raised because the object a
// statement creates is already present.
var ErrAlreadyExists = errors.New("schema: already exists")

// ErrNotFound is the code of an error raised because an object a statement
// needs (or drops) is missing.
var ErrNotFound = errors.New("schema: not found")

// ErrInvalid is the code of an error raised because a statement or a value is
// malformed: bad names, bad types, a bad primary key, bad options, or corrupt
// encoded bytes.
var ErrInvalid = errors.New("schema: invalid")

// Error is the error returned for a statement that cannot be applied. It
// names the statement, the object and the reason, and errors.Is matches it
// against its Code (ErrAlreadyExists, ErrNotFound or ErrInvalid).
type Error struct {
	// Statement is the kind of statement, e.g. "CREATE TABLE".
	Statement string
	// Object is the object the statement is about, e.g. "shop.orders".
	Object string
	// Reason says what is wrong, e.g. "table already exists".
	Reason string
	// Code is one of ErrAlreadyExists, ErrNotFound or ErrInvalid.
	Code error
}

// Error returns e.g. "CREATE TABLE shop.orders: table already exists".
// The object is the user's input and is shown cut to clip.Max bytes
// (clip.String); the reason clips the names it quotes itself.
func (e *Error) Error() string {
	switch {
	case e.Statement != "" && e.Object != "":
		return e.Statement + " " + clip.String(e.Object) + ": " + e.Reason
	case e.Statement != "":
		return e.Statement + ": " + e.Reason
	case e.Object != "":
		return clip.String(e.Object) + ": " + e.Reason
	}
	return e.Reason
}

// Unwrap returns the Code so that errors.Is(err, ErrNotFound) works.
func (e *Error) Unwrap() error { return e.Code }

func newError(stmt, object string, code error, reason string) *Error {
	return &Error{Statement: stmt, Object: object, Reason: reason, Code: code}
}
