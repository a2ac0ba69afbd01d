package schema

import (
	"encoding/binary"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/internal/cqltext"
)

// Column masks are Cassandra 5's dynamic data masking: a column may carry
// a masking function, partially applied to constant arguments, that
// Cassandra runs on the column's values for readers without the UNMASK
// permission. metalog stores masks (it never runs them): a mask lives in
// its Column, so it rides with the table through the encoding (flagMasks),
// the digest, the store, history and Undo, as the triggers do.
//
// The functions are Cassandra's native ones (its cql3/functions/masking
// package), checked as Cassandra's function resolution checks them: by
// name, by the number of arguments, by the type of each argument, and by
// the return type, which must be the column's. A user-defined function as
// a mask is refused until metalog takes functions.

// flagMasks marks the masks section of a table encoding, after the
// triggers: the masked columns by position, each with its function and
// arguments. A table without masks has no flag and encodes as before
// masks existed.
const flagMasks = 1 << 3

// maxMaskArgLength bounds the text of one mask argument (Cassandra has no
// limit; this keeps hostile input small).
const maxMaskArgLength = 4096

// Mask is the dynamic data mask of a column.
type Mask struct {
	// Function is the native masking function, without its "system."
	// keyspace: mask_null, mask_default, mask_replace, mask_inner,
	// mask_outer or mask_hash.
	Function string
	// Args are the arguments after the masked value, as canonical CQL
	// literal text ("null" for a null); nil when there are none.
	Args []string
}

// String returns the mask as DESCRIBE prints it after "MASKED WITH", e.g.
// "system.mask_inner(1, null)".
func (m *Mask) String() string {
	var b strings.Builder
	writeMask(&b, m)
	return b.String()
}

// writeMask writes what Mask.String returns.
func writeMask(b *strings.Builder, m *Mask) {
	b.WriteString("system.")
	b.WriteString(m.Function)
	b.WriteString("(")
	for i, a := range m.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a)
	}
	b.WriteString(")")
}

// MasksEqual reports whether a and b are the same mask (both nil is
// equal).
func MasksEqual(a, b *Mask) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Function != b.Function || len(a.Args) != len(b.Args) {
		return false
	}
	for i := range a.Args {
		if a.Args[i] != b.Args[i] {
			return false
		}
	}
	return true
}

// MaskDef is a mask as a statement gives it: "MASKED WITH fn(args)", or
// "MASKED WITH DEFAULT", which is mask_default().
type MaskDef struct {
	// Keyspace is the function's keyspace as written: "" when the name is
	// not qualified, "system" for the native functions written in full.
	Keyspace string
	// Function is the function name as written (the parser lowercases an
	// unquoted name).
	Function string
	// Args are the arguments after the masked value.
	Args []Literal

	// resolved, when set, is a mask already checked against a column of
	// the same type (CREATE TABLE ... LIKE copies the source's masks).
	resolved *Mask
}

// String returns the mask as written, e.g. "mask_inner(1, null)", as
// Cassandra names it in its errors.
func (d *MaskDef) String() string {
	if d.resolved != nil {
		return d.resolved.String()
	}
	var b strings.Builder
	if d.Keyspace != "" {
		b.WriteString(d.Keyspace)
		b.WriteString(".")
	}
	b.WriteString(d.Function)
	b.WriteString("(")
	for i, a := range d.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.String())
	}
	b.WriteString(")")
	return b.String()
}

// copiedMask is the MaskDef that carries m, already checked, to a copy
// of its column; nil for a column without a mask.
func copiedMask(m *Mask) *MaskDef {
	if m == nil {
		return nil
	}
	return &MaskDef{Keyspace: "system", Function: m.Function, resolved: m}
}

// LiteralKind classifies a Literal.
type LiteralKind = cqltext.Kind

// Literal kinds: the kinds of cqltext.Term a mask's argument may be.
const (
	// LitNull is null.
	LitNull = cqltext.KindNull
	// LitString is a string constant; Text is its value, unescaped.
	LitString = cqltext.KindString
	// LitInt is an integer constant; Text is its digits, with a sign.
	LitInt = cqltext.KindInteger
	// LitFloat is a float constant (with a point or an exponent, or NaN
	// or Infinity).
	LitFloat = cqltext.KindFloat
	// LitBool is true or false.
	LitBool = cqltext.KindBoolean
	// LitUUID is a UUID constant.
	LitUUID = cqltext.KindUUID
	// LitBlob is a 0x... blob constant.
	LitBlob = cqltext.KindBlob
	// LitDuration is a duration constant, such as 1h30m or P1D.
	LitDuration = cqltext.KindDuration
	// LitList is [e, ...]; Elems are the elements.
	LitList = cqltext.KindList
	// LitSet is {e, ...}; Elems are the elements.
	LitSet = cqltext.KindSet
	// LitMap is {k: v, ...}; Elems are the keys and values, alternating.
	// An empty {} is a LitMap, which a set also takes.
	LitMap = cqltext.KindMap
)

// Literal is a CQL constant, null, or collection literal, as an argument
// of a mask: a cqltext.Term of one of the kinds above. Its String is its
// canonical CQL text.
type Literal = cqltext.Term

// inferredType is the type Cassandra infers for a constant argument when
// the parameter does not fix it, as its errors name it: ascii for a
// string of ASCII characters, int, bigint or varint by the size of an
// integer, double for a float.
func inferredType(l Literal) string {
	switch l.Kind {
	case LitString:
		for i := 0; i < len(l.Text); i++ {
			if l.Text[i] >= utf8.RuneSelf {
				return "text"
			}
		}
		return "ascii"
	case LitInt:
		if _, err := strconv.ParseInt(l.Text, 10, 32); err == nil {
			return "int"
		}
		if _, err := strconv.ParseInt(l.Text, 10, 64); err == nil {
			return "bigint"
		}
		return "varint"
	case LitFloat:
		return "double"
	case LitBool:
		return "boolean"
	case LitUUID:
		return "uuid"
	case LitBlob:
		return "blob"
	case LitDuration:
		return "duration"
	}
	return termKindName(l)
}

// param is what a masking function takes at one position.
type param uint8

const (
	paramAny    param = iota + 1 // any type: the masked column of most functions
	paramString                  // text, varchar or ascii
	paramInt                     // int
	paramText                    // text
	paramSame                    // the column's type (mask_replace's replacement)
)

// String returns the parameter as Cassandra's function signatures print
// it in errors.
func (p param) String() string {
	switch p {
	case paramString:
		return "[text|varchar|ascii]"
	case paramInt:
		return "int"
	case paramText:
		return "text"
	case paramSame:
		return "same"
	}
	return "any"
}

// maskFunction is one of Cassandra's native masking functions: its
// parameters (the masked value first), how many trailing ones are
// optional, and whether it returns a blob whatever it masks.
type maskFunction struct {
	name     string
	params   []param
	optional int
	blob     bool
}

// maskFunctions are Cassandra 5's native masking functions, by name.
var maskFunctions = map[string]*maskFunction{
	"mask_null":    {name: "mask_null", params: []param{paramAny}},
	"mask_default": {name: "mask_default", params: []param{paramAny}},
	"mask_replace": {name: "mask_replace", params: []param{paramAny, paramSame}},
	"mask_inner":   {name: "mask_inner", params: []param{paramString, paramInt, paramInt, paramText}, optional: 1},
	"mask_outer":   {name: "mask_outer", params: []param{paramString, paramInt, paramInt, paramText}, optional: 1},
	"mask_hash":    {name: "mask_hash", params: []param{paramAny, paramText}, optional: 1, blob: true},
}

// maskFunctionNames lists the native masking functions for errors.
const maskFunctionNames = "mask_default, mask_hash, mask_inner, mask_null, mask_outer and mask_replace"

// nativeFunctions are Cassandra's native scalar functions that are not
// masking functions, which Cassandra refuses as masks by name.
var nativeFunctions = map[string]bool{
	"tojson": true, "fromjson": true, "token": true, "now": true, "uuid": true, "currenttimestamp": true,
	"currentdate": true, "currenttime": true, "currenttimeuuid": true, "mintimeuuid": true, "maxtimeuuid": true,
	"totimestamp": true, "todate": true, "tounixtimestamp": true, "dateof": true, "unixtimestampof": true,
	"abs": true, "exp": true, "log": true, "log10": true, "round": true, "ttl": true, "writetime": true,
	"maxwritetime": true, "count": true, "min": true, "max": true, "sum": true, "avg": true,
	"map_keys": true, "map_values": true, "collection_count": true, "collection_min": true,
	"collection_max": true, "collection_sum": true, "collection_avg": true, "similarity_cosine": true,
	"similarity_euclidean": true, "similarity_dot_product": true,
}

// signature is the function's signature as Cassandra prints it in "Invalid
// number of arguments" errors, e.g. "system.mask_default(any)".
func (f *maskFunction) signature() string {
	parts := make([]string, len(f.params))
	for i, p := range f.params {
		parts[i] = p.String()
		if i >= len(f.params)-f.optional {
			parts[i] = "[" + parts[i] + "]"
		}
	}
	return "system." + f.name + "(" + strings.Join(parts, ", ") + ")"
}

// resolveMask checks mask def of column name of type typ and returns the
// mask to store, or the reason it cannot be a mask, in Cassandra's words.
func resolveMask(def *MaskDef, name string, typ Type) (*Mask, string) {
	if def.resolved != nil {
		if r := maskTypeReason(def.resolved, name, typ); r != "" {
			return nil, r
		}
		return def.resolved, ""
	}
	f, r := maskFunctionOf(def, name)
	if r != "" {
		return nil, r
	}
	if n := 1 + len(def.Args); n > len(f.params) || n < len(f.params)-f.optional {
		return nil, "Invalid number of arguments for function " + f.signature()
	}
	if f.params[0] == paramString && !isStringType(typ) {
		return nil, "Function system." + f.name + " requires an argument of type " + paramString.String() + ", but found column " + clip.String(name) + " of type " + clip.String(typeString(typ))
	}
	m := &Mask{Function: f.name}
	for i, a := range def.Args {
		text, r := maskArgument(f, f.params[i+1], a, name, typ)
		if r != "" {
			return nil, r
		}
		m.Args = append(m.Args, text)
	}
	if f.blob && baseType(typ) != TypeBlob {
		return nil, "Masking function " + clip.String(def.String()) + " return type is blob. This is different to the type of the masked column " +
			clip.String(name) + " of type " + clip.String(typeString(typ)) + ". Masking functions can only be attached to table columns if they return the same data type as the masked column."
	}
	return m, ""
}

// maskFunctionOf finds the native masking function def names. A name
// that is no native function may be a user-defined one, which metalog
// does not take yet.
func maskFunctionOf(def *MaskDef, column string) (*maskFunction, string) {
	native := def.Keyspace == "" || def.Keyspace == "system"
	if f, ok := maskFunctions[def.Function]; ok && native {
		return f, ""
	}
	switch {
	case native && nativeFunctions[def.Function]:
		return nil, "Not-masking function " + clip.String(def.String()) + " cannot be used for masking table columns"
	case def.Keyspace == "system":
		return nil, "Unable to find masking function for " + clip.String(column) + ", no declared function matches the signature " + clip.String(def.String())
	case def.Keyspace == "":
		return nil, "Unable to find masking function for " + clip.String(column) + ", no declared function matches the signature " + clip.String(def.String()) +
			" (the native masking functions are " + maskFunctionNames + "; masking with a user-defined function is not supported)"
	}
	return nil, "masking with a user-defined function is not supported: " + clip.String(def.String()) + " (the native masking functions are " + maskFunctionNames + ")"
}

// maskArgument checks argument a of function f at parameter p against the
// masked column (name, typ) and returns its canonical text.
func maskArgument(f *maskFunction, p param, a Literal, name string, typ Type) (string, string) {
	if len(a.String()) > maxMaskArgLength {
		return "", "an argument of the mask of column " + clip.String(name) + " is longer than 4096 bytes"
	}
	if a.Kind == LitNull {
		return "null", ""
	}
	var receiver Type
	switch p {
	case paramInt:
		if a.Kind != LitInt || inferredType(a) != "int" {
			return "", "Function system." + f.name + " requires an argument of type int, but found argument " + clip.String(a.String()) + " of type " + inferredType(a)
		}
		receiver = TypeInt
	case paramText:
		if a.Kind != LitString {
			return "", "Function system." + f.name + " requires an argument of type text, but found argument " + clip.String(a.String()) + " of type " + inferredType(a)
		}
		receiver = TypeText
	default:
		receiver = typ
	}
	var b strings.Builder
	if r := checkLiteral(&b, a, receiver, maskRules{}, name, 0); r != "" {
		return "", r + " for the mask of column " + clip.String(name) + " of type " + clip.String(typeString(typ))
	}
	return b.String(), ""
}

// isStringType reports whether t is text (varchar) or ascii.
func isStringType(t Type) bool {
	b := baseType(t)
	return b == TypeText || b == TypeAscii
}

// baseType is t without a frozen<...>.
func baseType(t Type) Type {
	for {
		f, ok := t.(FrozenType)
		if !ok {
			return t
		}
		t = f.Inner
	}
}

// maskRules are the rules of a mask's constant arguments, as Cassandra's
// Constants.Literal, Lists, Sets and Maps check a term assigned to the
// parameter's type, in its words ("Invalid STRING constant ('x')", which
// maskArgument completes with the masked column): the kind of constant
// each type takes, integer ranges, ASCII text, timeuuid versions, and the
// shape of collections, without null inside them; the text of dates,
// times and inet addresses is taken as written. Tuples and user types
// have no literal among mask arguments.
type maskRules struct{}

func (maskRules) native(b *strings.Builder, v cqltext.Term, t NativeType, _ string) string {
	if !constantFits(v, t) {
		return invalidTerm(v)
	}
	if v.Kind == cqltext.KindInteger {
		b.WriteString(canonicalInt(v.Text))
		return ""
	}
	cqltext.Write(b, v, 0)
	return ""
}

func (maskRules) null(_ string, elem bool) string {
	if elem {
		return "null is not supported inside collections"
	}
	return ""
}

func (maskRules) mismatch(v cqltext.Term, t Type, _, _ string) string {
	switch baseType(t).(type) {
	case ListType, SetType, MapType, VectorType:
		return invalidTerm(v)
	}
	return "a literal of type " + clip.String(typeString(t)) + " is not supported as a mask argument"
}

func (maskRules) vectorSize(v cqltext.Term, t VectorType, _ string) string {
	return "Invalid vector literal " + clip.String(v.String()) + ": expected " + strconv.Itoa(t.Dimension) + " elements, got " + strconv.Itoa(len(v.Elems))
}

func (c maskRules) tupleSize(_ TupleType, _ int, _ string) string {
	return "tuples are not supported as mask arguments"
}

func (c maskRules) userType(v cqltext.Term, _ UserTypeRef, given Type, what string) (*UserType, string) {
	return nil, c.mismatch(v, given, what, "")
}

func (maskRules) fieldKey(cqltext.Term, int) string { return "" }

func (maskRules) unknownField(string, *UserType, UserTypeRef) string { return "" }

// invalidTerm is Cassandra's refusal of term v for a type that does not
// take it: "Invalid STRING constant ('x')", "Invalid list literal [1]".
func invalidTerm(v cqltext.Term) string {
	if name, ok := collectionNames[v.Kind]; ok {
		return "Invalid " + name + " literal " + clip.String(v.String())
	}
	return "Invalid " + termKindName(v) + " constant (" + clip.String(v.String()) + ")"
}

// termKindName is Cassandra's name of the kind of v: NULL, STRING,
// INTEGER..., or list, set or map.
func termKindName(v cqltext.Term) string {
	if v.Kind == cqltext.KindNull {
		return "NULL"
	}
	if name, ok := constantNames[v.Kind]; ok {
		return name
	}
	return collectionNames[v.Kind]
}

// constantFits reports whether constant v can be a value of native type
// t: by its kind (constantTakes) and, for integers, ASCII text and
// timeuuids, by its value.
func constantFits(v cqltext.Term, t NativeType) bool {
	if !constantTakes(v.Kind, t) {
		return false
	}
	switch {
	case v.Kind == cqltext.KindString && t == TypeAscii:
		for i := 0; i < len(v.Text); i++ {
			if v.Text[i] >= utf8.RuneSelf {
				return false
			}
		}
	case v.Kind == cqltext.KindInteger:
		if n, ok := intBits[t]; ok {
			_, err := strconv.ParseInt(v.Text, 10, n)
			return err == nil
		}
	case v.Kind == cqltext.KindUUID && t == TypeTimeuuid:
		return len(v.Text) == 36 && v.Text[14] == '1'
	}
	return true
}

// intBits are the sizes of the native types an integer constant must fit
// (varint has none).
var intBits = map[NativeType]int{TypeTinyint: 8, TypeSmallint: 16, TypeInt: 32, TypeBigint: 64, TypeCounter: 64, TypeDate: 64, TypeTime: 64, TypeTimestamp: 64}

// canonicalInt returns an integer constant without a plus sign or leading
// zeros.
func canonicalInt(text string) string {
	n, ok := new(big.Int).SetString(text, 10)
	if !ok {
		return text
	}
	return n.String()
}

// maskTypeReason checks that stored mask m can mask a column (name, typ):
// a known function with a number of arguments it takes, on a type it
// masks and returns. It is what a decoded table is checked for; the
// arguments were checked when the mask was given.
func maskTypeReason(m *Mask, name string, typ Type) string {
	f, ok := maskFunctions[m.Function]
	if !ok {
		return "column " + clip.String(name) + " is masked with unknown function " + clip.String(m.Function)
	}
	if n := 1 + len(m.Args); n > len(f.params) || n < len(f.params)-f.optional {
		return "column " + clip.String(name) + ": Invalid number of arguments for function " + f.signature()
	}
	if f.params[0] == paramString && !isStringType(typ) {
		return "column " + clip.String(name) + " of type " + clip.String(typeString(typ)) + " cannot be masked with " + f.name
	}
	if f.blob && baseType(typ) != TypeBlob {
		return "column " + clip.String(name) + " of type " + clip.String(typeString(typ)) + " cannot be masked with " + f.name + ", which returns blob"
	}
	for _, a := range m.Args {
		if a == "" || len(a) > maxMaskArgLength || !utf8.ValidString(a) {
			return "column " + clip.String(name) + " has a mask argument that is empty, longer than 4096 bytes or not UTF-8"
		}
	}
	return ""
}

// masksReason checks the masks of t's columns.
func masksReason(t *Table) string {
	for i := range t.Columns {
		if c := &t.Columns[i]; c.Mask != nil {
			if r := maskTypeReason(c.Mask, c.Name, c.Type); r != "" {
				return r
			}
		}
	}
	return ""
}

// HasMasks reports whether a column of t is masked.
func (t *Table) HasMasks() bool {
	for i := range t.Columns {
		if t.Columns[i].Mask != nil {
			return true
		}
	}
	return false
}

// appendMasks appends the masks section of t's encoding: the number of
// masked columns, then for each, in column order, its position, its
// function and its arguments.
func appendMasks(dst []byte, t *Table) []byte {
	n := 0
	for i := range t.Columns {
		if t.Columns[i].Mask != nil {
			n++
		}
	}
	dst = binary.AppendUvarint(dst, uint64(n))
	for i := range t.Columns {
		m := t.Columns[i].Mask
		if m == nil {
			continue
		}
		dst = binary.AppendUvarint(dst, uint64(i))
		dst = appendString(dst, m.Function)
		dst = binary.AppendUvarint(dst, uint64(len(m.Args)))
		for _, a := range m.Args {
			dst = appendString(dst, a)
		}
	}
	return dst
}

// masks reads the masks section appendMasks writes into t's columns: at
// least one mask (a table without masks has no flag, so that its encoding
// is canonical), at increasing column positions.
func (d *decoder) masks(t *Table) {
	n := d.count(3)
	if d.err == nil && n == 0 {
		d.fail("masks flag with no masks")
	}
	last := -1
	for j := 0; j < n && d.err == nil; j++ {
		i := int(d.uvarint(uint64(len(t.Columns))))
		if d.err == nil && (i >= len(t.Columns) || i <= last) {
			d.fail("mask of column position %d out of order or range", i)
		}
		m := &Mask{Function: d.string()}
		if k := d.count(1); d.err == nil && k > 0 {
			if k > 3 {
				d.fail("mask with %d arguments", k)
				return
			}
			m.Args = make([]string, k)
			for a := range m.Args {
				m.Args[a] = d.string()
			}
		}
		if d.err == nil {
			t.Columns[i].Mask = m
			last = i
		}
	}
}

// AlterMask is the ALTER column clause of ALTER TABLE that sets or drops
// a mask: "ALTER [IF EXISTS] c MASKED WITH fn(args)" or "ALTER [IF EXISTS]
// c DROP MASKED". AlterTable.ClauseIf is its IF EXISTS.
type AlterMask struct {
	// Column is the column to mask or unmask.
	Column string
	// Mask is the new mask; nil for DROP MASKED.
	Mask *MaskDef
}

// alterMask applies the mask clause to table old. As in Cassandra, any
// column can be masked, key columns included; setting the mask a column
// has, or dropping the mask of a column without one, changes nothing
// (Applied false, no diff).
func (st *AlterTable) alterMask(tg target, old *Table) (Schema, Diff, Result, error) {
	i := columnIndex(old, st.Mask.Column)
	if i == len(old.Columns) {
		if st.ClauseIf {
			return tg.end(nil)
		}
		return tg.fail(ErrInvalid, "Column with name '"+clip.String(st.Mask.Column)+"' doesn't exist on table '"+clip.String(old.Name)+"'")
	}
	var m *Mask
	if st.Mask.Mask != nil {
		var r string
		if m, r = resolveMask(st.Mask.Mask, old.Columns[i].Name, old.Columns[i].Type); r != "" {
			return tg.fail(ErrInvalid, r)
		}
	}
	if MasksEqual(m, old.Columns[i].Mask) {
		return tg.end(nil)
	}
	t := *old
	t.Columns = append([]Column(nil), old.Columns...)
	t.Columns[i].Mask = m
	if r := validateTable(&t); r != "" {
		return tg.fail(ErrInvalid, r)
	}
	tg.res.Applied = true
	// The views that have the column get its mask too, as in Cassandra,
	// so that a column is masked the same in the base and its views; they
	// come first in the diff, as for the other base changes that reach
	// views.
	s := tg.s
	var d Diff
	for _, v := range maskedViews(tg.k, old.Name, old.Columns[i].Name, m) {
		s = s.putTable(tg.k, v)
		d.Changes = append(d.Changes, Change{Op: OpPutTable, Keyspace: tg.k.Name, Table: v.Name, TableValue: v})
		tg.k, _ = s.Keyspace(tg.k.Name)
	}
	d.Changes = append(d.Changes, Change{Op: OpPutTable, Keyspace: tg.k.Name, Table: t.Name, TableValue: &t})
	return s.putTable(tg.k, &t), d, tg.res, nil
}

// maskedViews returns the views of base (in k) that have column, each as
// it is with mask m on that column, in name order.
func maskedViews(k *Keyspace, base, column string, m *Mask) []*Table {
	var out []*Table
	for _, old := range k.Views(base) {
		j := columnIndex(old, column)
		if j == len(old.Columns) {
			continue
		}
		v := *old
		v.Columns = append([]Column(nil), old.Columns...)
		v.Columns[j].Mask = m
		out = append(out, &v)
	}
	return out
}
