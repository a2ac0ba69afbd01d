package cql

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/metalog/metalog/internal/cqltext"
)

// tokenKind classifies a token.
type tokenKind uint8

const (
	tokEOF      tokenKind = iota
	tokIdent              // unquoted identifier or keyword; val is lowercased
	tokQuoted             // "quoted identifier"; val is unescaped
	tokString             // 'string' or $$string$$; val is unescaped
	tokInt                // integer constant; val is the text
	tokFloat              // float constant; val is the text
	tokUUID               // UUID constant; val is the text
	tokBlob               // 0x... blob constant; val is the text
	tokDuration           // duration constant (1h30m, P1D); val is the text
	tokPunct              // one of ( ) , ; . = { } : < > [ ] + * - / % ? and !=
)

// token is one lexical token. pos and end are byte offsets into the source.
type token struct {
	kind      tokenKind
	val       string
	pos, end  int
	line, col int
}

// lexer splits CQL text into tokens.
type lexer struct {
	src       string
	off       int
	line      int // line of off, 1-based
	lineStart int // byte offset where line starts
	colOff    int // a byte offset on the current line whose column is known
	col       int // the column of colOff
}

// lex returns all tokens of src, ending with a tokEOF token. Invalid UTF-8
// is an error at its position.
func lex(src string) ([]token, error) {
	l := &lexer{src: src, line: 1, col: 1}
	if !utf8.ValidString(src) {
		bad := 0
		for bad < len(src) {
			r, n := utf8.DecodeRuneInString(src[bad:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			bad += n
		}
		l.advance(bad)
		return nil, l.errAt(bad, "", "invalid UTF-8 (byte 0x"+strconv.FormatUint(uint64(src[bad]), 16)+" at offset "+strconv.Itoa(bad)+")")
	}
	// CQL DDL runs about one token per three bytes; sizing for that saves
	// the slice's repeated growth on every statement parsed.
	toks := make([]token, 0, len(src)/3+2)
	for {
		t, err := l.next()
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
		if t.kind == tokEOF {
			return toks, nil
		}
	}
}

// column returns the 1-based column (in runes) of byte offset off, which
// must be on the current line. Offsets only grow, so counting from the last
// known column keeps lexing linear even on a megabyte-long line.
func (l *lexer) column(off int) int {
	if l.colOff < l.lineStart || off < l.colOff {
		l.colOff, l.col = l.lineStart, 1
	}
	l.col += utf8.RuneCountInString(l.src[l.colOff:off])
	l.colOff = off
	return l.col
}

// errAt is the *SyntaxError msg about the token tokText at byte offset
// off of the current line.
func (l *lexer) errAt(off int, tokText, msg string) error {
	return &SyntaxError{Line: l.line, Column: l.column(off), Token: tokText, Msg: msg}
}

// advance moves past n bytes, tracking line starts.
func (l *lexer) advance(n int) {
	for i := 0; i < n; i++ {
		if l.src[l.off] == '\n' {
			l.line++
			l.lineStart = l.off + 1
		}
		l.off++
	}
}

// skipSpace skips white space and comments.
func (l *lexer) skipSpace() error {
	for l.off < len(l.src) {
		c := l.src[l.off]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			l.advance(1)
		case strings.HasPrefix(l.src[l.off:], "--") || strings.HasPrefix(l.src[l.off:], "//"):
			n := strings.IndexByte(l.src[l.off:], '\n')
			if n < 0 {
				n = len(l.src) - l.off
			}
			l.advance(n)
		case strings.HasPrefix(l.src[l.off:], "/*"):
			n := strings.Index(l.src[l.off+2:], "*/")
			if n < 0 {
				return l.errAt(l.off, "/*", "unterminated comment")
			}
			l.advance(n + 4)
		default:
			return nil
		}
	}
	return nil
}

// Byte classes of the lexer; identifiers and keywords are ASCII.

// maxInternedWord is the length of the longest word lowerIdent interns;
// every word of internedWords fits.
const maxInternedWord = 16

// internedWords are the CQL keywords and type names, by their lowercase
// text, that lowerIdent answers without allocating when a statement
// writes them in upper or mixed case (CREATE TABLE ... PRIMARY KEY).
var internedWords = func() map[string]string {
	m := map[string]string{}
	add := func(w string) {
		if len(w) > maxInternedWord {
			panic("cql: interned word " + w + " is longer than maxInternedWord")
		}
		m[w] = w
	}
	for _, w := range cqltext.Keywords(false) {
		add(w)
	}
	for _, w := range strings.Fields(`create alter drop add rename table keyspace columnfamily index
		materialized view primary with and if not exists on using order by asc desc use to from where
		or in is null replication durable_writes comment id schema token expr returns`) {
		add(w)
	}
	return m
}()

// lowerIdent returns the unquoted identifier s (ASCII letters, digits and
// '_') in lowercase, as strings.ToLower would. A keyword or type name in
// upper case comes from internedWords instead of a new string: the
// lexer meets one in nearly every statement.
func lowerIdent(s string) string {
	if len(s) > maxInternedWord {
		return strings.ToLower(s)
	}
	var buf [maxInternedWord]byte
	upper := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
			upper = true
		}
		buf[i] = c
	}
	if !upper {
		return s
	}
	if w, ok := internedWords[string(buf[:len(s)])]; ok {
		return w
	}
	return string(buf[:len(s)])
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isHex(c byte) bool    { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// uuidAt reports whether a UUID constant starts at s[0] and is not followed
// by an identifier character.
func uuidAt(s string) bool {
	if len(s) < 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return false
			}
		} else if !isHex(s[i]) {
			return false
		}
	}
	return len(s) == 36 || !cqltext.IsWordByte(s[36])
}

// next lexes the token after the white space and comments at the current
// offset; at the end of the input it returns a tokEOF token.
func (l *lexer) next() (token, error) {
	if err := l.skipSpace(); err != nil {
		return token{}, err
	}
	start := l.off
	t := token{pos: start, line: l.line, col: l.column(start)}
	finish := func(kind tokenKind, n int, val string) (token, error) {
		l.advance(n)
		t.kind, t.val, t.end = kind, val, l.off
		return t, nil
	}
	if l.off >= len(l.src) {
		return finish(tokEOF, 0, "")
	}
	rest := l.src[l.off:]
	c := rest[0]
	switch {
	case isHex(c) && uuidAt(rest):
		return finish(tokUUID, 36, strings.ToLower(rest[:36]))
	case c == '0' && len(rest) > 1 && (rest[1] == 'x' || rest[1] == 'X'):
		n := 2
		for n < len(rest) && isHex(rest[n]) {
			n++
		}
		if n < len(rest) && cqltext.IsWordByte(rest[n]) {
			return token{}, l.errAt(start, rest[:n+1], "malformed blob constant")
		}
		return finish(tokBlob, n, strings.ToLower(rest[:n]))
	case c == 'P' || c == '-' && len(rest) > 1 && rest[1] == 'P':
		// An ISO 8601 duration when it is longer than the identifier at
		// the same place. A tie ("P", "P1D") is an identifier here, though
		// Lexer.g makes it a duration: names like P were taken before
		// durations were, and log entries are parsed again when they
		// apply. Where a constant is expected, term reads such an
		// identifier as the duration it spells.
		if d := cqltext.DurationLen(rest); d > 0 && d > identLen(rest) {
			return finish(tokDuration, d, rest[:d])
		}
		if c == '-' {
			return finish(tokPunct, 1, "-")
		}
		n := identLen(rest)
		return finish(tokIdent, n, lowerIdent(rest[:n]))
	case isLetter(c):
		n := 1
		for n < len(rest) && cqltext.IsWordByte(rest[n]) {
			n++
		}
		return finish(tokIdent, n, lowerIdent(rest[:n]))
	case isDigit(c) || c == '-' && len(rest) > 1 && isDigit(rest[1]):
		return l.number(t, rest)
	case c == '"':
		return l.quoted(t, rest, '"', tokQuoted)
	case c == '\'':
		return l.quoted(t, rest, '\'', tokString)
	case strings.HasPrefix(rest, "$$"):
		n := strings.Index(rest[2:], "$$")
		if n < 0 {
			return token{}, l.errAt(start, "$$", "unterminated $$ string")
		}
		return finish(tokString, n+4, rest[2:2+n])
	case strings.IndexByte("(),;.={}:<>[]+*-/%?", c) >= 0:
		return finish(tokPunct, 1, rest[:1])
	case strings.HasPrefix(rest, "!="):
		return finish(tokPunct, 2, "!=")
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return token{}, l.errAt(start, string(r), "unexpected character "+quoteTok(string(r)))
}

// number lexes an integer or float constant.
func (l *lexer) number(t token, rest string) (token, error) {
	n := 0
	if rest[0] == '-' {
		n++
	}
	for n < len(rest) && isDigit(rest[n]) {
		n++
	}
	if d := cqltext.DurationLen(rest); d > n {
		// 1h30m: digits and a unit, as many times as given.
		if d < len(rest) && cqltext.IsWordByte(rest[d]) {
			e := d + identLen(rest[d:])
			return token{}, l.errAt(t.pos, rest[:e], "malformed duration "+quoteTok(rest[:e]))
		}
		l.advance(d)
		t.kind, t.val, t.end = tokDuration, rest[:d], l.off
		return t, nil
	}
	kind := tokInt
	if n < len(rest) && rest[n] == '.' {
		// INTEGER '.' DIGIT*: "1." is a float too.
		kind = tokFloat
		n++
		for n < len(rest) && isDigit(rest[n]) {
			n++
		}
	}
	if n < len(rest) && (rest[n] == 'e' || rest[n] == 'E') {
		m := n + 1
		if m < len(rest) && (rest[m] == '+' || rest[m] == '-') {
			m++
		}
		if m < len(rest) && isDigit(rest[m]) {
			kind = tokFloat
			n = m
			for n < len(rest) && isDigit(rest[n]) {
				n++
			}
		}
	}
	if n < len(rest) && cqltext.IsWordByte(rest[n]) {
		e := n
		for e < len(rest) && cqltext.IsWordByte(rest[e]) {
			e++
		}
		return token{}, l.errAt(t.pos, rest[:e], "malformed number "+quoteTok(rest[:e]))
	}
	l.advance(n)
	t.kind, t.val, t.end = kind, rest[:n], l.off
	return t, nil
}

// quoted lexes a string or quoted identifier; q doubled inside is one q.
func (l *lexer) quoted(t token, rest string, q byte, kind tokenKind) (token, error) {
	var b strings.Builder
	i := 1
	for {
		j := strings.IndexByte(rest[i:], q)
		if j < 0 {
			what := "unterminated string"
			if kind == tokQuoted {
				what = "unterminated quoted identifier"
			}
			return token{}, l.errAt(t.pos, rest[:1], what)
		}
		b.WriteString(rest[i : i+j])
		i += j + 1
		if i < len(rest) && rest[i] == q {
			b.WriteByte(q)
			i++
			continue
		}
		break
	}
	if kind == tokQuoted && b.Len() == 0 {
		return token{}, l.errAt(t.pos, rest[:i], "empty quoted identifier")
	}
	l.advance(i)
	t.kind, t.val, t.end = kind, b.String(), l.off
	return t, nil
}
