package cql

import (
	"strconv"
	"strings"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/internal/cqltext"
	"github.com/metalog/metalog/schema"
)

// Parsed is one statement of a parsed text.
type Parsed struct {
	// Statement is the transformation the statement denotes.
	Statement schema.Statement
	// Text is the source text of the statement, trimmed, without the ';'.
	Text string
	// Line and Column locate the statement's first token (1-based).
	Line, Column int
}

// Parse parses text, a sequence of CQL DDL statements separated by ';'
// (the last one optional; empty statements are ignored). It returns the
// statements in order, or the first *SyntaxError. Parse checks syntax only:
// names, types and keys are validated by schema.Apply.
//
// A USE statement is returned as a *schema.Use, and every later statement
// of the text that names no keyspace gets the USE's keyspace filled in, so
// applying the statements needs no session state.
func Parse(text string) ([]Parsed, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	p := &parser{src: text, toks: toks}
	var out []Parsed
	use := "" // the keyspace of the last USE
	for {
		for p.punct(";") {
		}
		if p.peek().kind == tokEOF {
			return out, nil
		}
		first := p.peek()
		st, err := p.statement()
		if err != nil {
			return nil, err
		}
		last := p.toks[p.i-1]
		if !p.punct(";") && p.peek().kind != tokEOF {
			return nil, p.unexpected("';' or end of input")
		}
		if u, ok := st.(*schema.Use); ok {
			use = u.Keyspace
		} else if use != "" {
			qualifyStatement(st, use)
		}
		out = append(out, Parsed{
			Statement: st,
			Text:      strings.TrimSpace(text[first.pos:last.end]),
			Line:      first.line,
			Column:    first.col,
		})
	}
}

// parser is a recursive-descent parser over the tokens of one text.
type parser struct {
	src  string
	toks []token
	i    int // index of the next token; toks ends with tokEOF
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) peekAt(n int) token {
	if p.i+n >= len(p.toks) {
		return p.toks[len(p.toks)-1]
	}
	return p.toks[p.i+n]
}

func (p *parser) advance() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

// isKeyword reports whether t is the unquoted keyword kw (lowercase).
func isKeyword(t token, kw string) bool { return t.kind == tokIdent && t.val == kw }

// keyword consumes the keyword kw if it is next.
func (p *parser) keyword(kw string) bool {
	if isKeyword(p.peek(), kw) {
		p.i++
		return true
	}
	return false
}

// punct consumes the punctuation s if it is next.
func (p *parser) punct(s string) bool {
	if t := p.peek(); t.kind == tokPunct && t.val == s {
		p.i++
		return true
	}
	return false
}

// unexpected returns a SyntaxError at the next token. A '?' (a bind
// marker, which only a view's WHERE clause names) is an unexpected
// character, as the lexer says of other characters no rule takes.
func (p *parser) unexpected(expected string) error {
	t := p.peek()
	if t.kind == tokPunct && t.val == "?" {
		return p.errAt(t, "unexpected character "+quoteTok(t.val))
	}
	return &SyntaxError{Line: t.line, Column: t.col, Token: p.src[t.pos:t.end], Expected: expected}
}

// errAt returns a SyntaxError with a message at token t.
func (p *parser) errAt(t token, msg string) error {
	return &SyntaxError{Line: t.line, Column: t.col, Token: p.src[t.pos:t.end], Msg: msg}
}

func (p *parser) expectKeyword(kw, expected string) error {
	if !p.keyword(kw) {
		return p.unexpected(expected)
	}
	return nil
}

func (p *parser) expectPunct(s string) error {
	if !p.punct(s) {
		return p.unexpected(strconv.Quote(s))
	}
	return nil
}

// ident parses an identifier: unquoted (lowercased, not a reserved
// keyword) or quoted (kept as written).
func (p *parser) ident(what string) (string, error) {
	t := p.peek()
	switch {
	case t.kind == tokQuoted, t.kind == tokIdent && !cqltext.IsReserved(t.val):
		p.i++
		return t.val, nil
	}
	return "", p.unexpected(what)
}

// qualifiedName parses [keyspace.]name.
func (p *parser) qualifiedName(what string) (ks, name string, err error) {
	name, err = p.ident(what)
	if err != nil {
		return "", "", err
	}
	if p.punct(".") {
		ks = name
		if name, err = p.ident(what); err != nil {
			return "", "", err
		}
	}
	return ks, name, nil
}

// emptyItems skips the empty items Cassandra's grammar allows after a
// comma of a column or field list ("(a int,, b int,)"), and reports
// whether the list ended: it consumed the ')'.
func (p *parser) emptyItems() bool {
	for p.punct(",") {
	}
	return p.punct(")")
}

// ifNotExists parses an optional IF NOT EXISTS.
func (p *parser) ifNotExists() (bool, error) {
	if !p.keyword("if") {
		return false, nil
	}
	if err := p.expectKeyword("not", "NOT"); err != nil {
		return false, err
	}
	return true, p.expectKeyword("exists", "EXISTS")
}

// ifExists parses an optional IF EXISTS.
func (p *parser) ifExists() (bool, error) {
	if !p.keyword("if") {
		return false, nil
	}
	return true, p.expectKeyword("exists", "EXISTS")
}

// qualifyStatement fills in ks as the keyspace of a statement that names
// none.
func qualifyStatement(st schema.Statement, ks string) {
	set := func(p *string) {
		if *p == "" {
			*p = ks
		}
	}
	switch st := st.(type) {
	case *schema.CreateTable:
		set(&st.Keyspace)
	case *schema.CreateTableLike:
		set(&st.Keyspace)
		set(&st.SourceKeyspace)
	case *schema.AlterTable:
		set(&st.Keyspace)
	case *schema.DropTable:
		set(&st.Keyspace)
	case *schema.CreateType:
		set(&st.Keyspace)
	case *schema.AlterType:
		set(&st.Keyspace)
	case *schema.DropType:
		set(&st.Keyspace)
	case *schema.CreateIndex:
		set(&st.Keyspace)
	case *schema.DropIndex:
		set(&st.Keyspace)
	case *schema.CreateTrigger:
		set(&st.Keyspace)
	case *schema.DropTrigger:
		set(&st.Keyspace)
	case *schema.CreateFunction:
		set(&st.Keyspace)
	case *schema.CreateAggregate:
		set(&st.Keyspace)
	case *schema.DropFunction:
		set(&st.Keyspace)
	case *schema.DropAggregate:
		set(&st.Keyspace)
	case *schema.CreateView:
		// The base table is in the view's keyspace; a keyspace written
		// with it must be that one, which Apply checks.
		set(&st.Keyspace)
	case *schema.AlterView:
		set(&st.Keyspace)
	case *schema.DropView:
		set(&st.Keyspace)
	}
}

// statement parses one statement.
func (p *parser) statement() (schema.Statement, error) {
	if err := p.refuseNotSchema(); err != nil {
		return nil, err
	}
	switch {
	case p.keyword("create"):
		return p.create()
	case p.keyword("alter"):
		return p.alter()
	case p.keyword("drop"):
		return p.drop()
	case p.keyword("use"):
		name, err := p.ident("a keyspace name")
		if err != nil {
			return nil, err
		}
		return &schema.Use{Keyspace: name}, nil
	}
	return nil, p.unexpected("a statement (CREATE, ALTER, DROP or USE)")
}

func (p *parser) create() (schema.Statement, error) {
	switch {
	case p.keyword("keyspace"), p.keyword("schema"):
		return p.createKeyspace()
	case p.keyword("table"), p.keyword("columnfamily"):
		return p.createTable()
	case p.keyword("type"):
		return p.createType()
	case p.keyword("index"):
		return p.createIndex(false)
	case p.keyword("custom"):
		if err := p.expectKeyword("index", "INDEX"); err != nil {
			return nil, err
		}
		return p.createIndex(true)
	case p.keyword("trigger"):
		return p.createTrigger()
	case p.keyword("function"):
		return p.createFunction(false)
	case p.keyword("aggregate"):
		return p.createAggregate(false)
	case p.materializedView():
		return p.createView()
	case isKeyword(p.peek(), "or") && isKeyword(p.peekAt(1), "replace"):
		p.i += 2
		switch {
		case p.keyword("function"):
			return p.createFunction(true)
		case p.keyword("aggregate"):
			return p.createAggregate(true)
		}
		return nil, p.unexpected("FUNCTION or AGGREGATE")
	}
	return nil, p.unexpected("KEYSPACE, TABLE, TYPE, INDEX, CUSTOM INDEX, TRIGGER, FUNCTION, AGGREGATE or MATERIALIZED VIEW")
}

func (p *parser) drop() (schema.Statement, error) {
	kind := p.peek()
	switch {
	case p.keyword("keyspace"), p.keyword("schema"):
		ifExists, err := p.ifExists()
		if err != nil {
			return nil, err
		}
		name, err := p.ident("a keyspace name")
		if err != nil {
			return nil, err
		}
		return &schema.DropKeyspace{Name: name, IfExists: ifExists}, nil
	case p.keyword("table"), p.keyword("columnfamily"), p.keyword("type"), p.keyword("index"):
		ifExists, err := p.ifExists()
		if err != nil {
			return nil, err
		}
		what := "a " + kind.val + " name"
		if kind.val == "columnfamily" {
			what = "a table name"
		}
		ks, name, err := p.qualifiedName(what)
		if err != nil {
			return nil, err
		}
		switch kind.val {
		case "type":
			return &schema.DropType{Keyspace: ks, Name: name, IfExists: ifExists}, nil
		case "index":
			return &schema.DropIndex{Keyspace: ks, Name: name, IfExists: ifExists}, nil
		}
		return &schema.DropTable{Keyspace: ks, Name: name, IfExists: ifExists}, nil
	case p.keyword("trigger"):
		return p.dropTrigger()
	case p.keyword("function"):
		return p.dropFunction(false)
	case p.keyword("aggregate"):
		return p.dropFunction(true)
	case p.materializedView():
		return p.dropView()
	}
	return nil, p.unexpected("KEYSPACE, TABLE, TYPE, INDEX, TRIGGER, FUNCTION, AGGREGATE or MATERIALIZED VIEW")
}

func (p *parser) alter() (schema.Statement, error) {
	switch {
	case p.keyword("keyspace"), p.keyword("schema"):
		return p.alterKeyspace()
	case p.keyword("table"), p.keyword("columnfamily"):
		return p.alterTable()
	case p.keyword("type"):
		return p.alterType()
	case p.materializedView():
		return p.alterView()
	}
	return nil, p.unexpected("KEYSPACE, TABLE, TYPE or MATERIALIZED VIEW")
}

// materializedView consumes MATERIALIZED VIEW if it comes next.
func (p *parser) materializedView() bool {
	if isKeyword(p.peek(), "materialized") && isKeyword(p.peekAt(1), "view") {
		p.i += 2
		return true
	}
	return false
}

// createKeyspace parses the rest of CREATE KEYSPACE.
func (p *parser) createKeyspace() (schema.Statement, error) {
	st := &schema.CreateKeyspace{DurableWrites: true}
	var err error
	if st.IfNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	if st.Name, err = p.ident("a keyspace name"); err != nil {
		return nil, err
	}
	if err := p.expectKeyword("with", "WITH"); err != nil {
		return nil, err
	}
	repl, durable, err := p.keyspaceProperties()
	if err != nil {
		return nil, err
	}
	if repl == nil {
		return nil, p.unexpected("AND replication = {...}")
	}
	st.Replication = *repl
	if durable != nil {
		st.DurableWrites = *durable
	}
	return st, nil
}

// alterKeyspace parses the rest of ALTER KEYSPACE.
func (p *parser) alterKeyspace() (schema.Statement, error) {
	st := &schema.AlterKeyspace{}
	var err error
	if st.IfExists, err = p.ifExists(); err != nil {
		return nil, err
	}
	if st.Name, err = p.ident("a keyspace name"); err != nil {
		return nil, err
	}
	if err := p.expectKeyword("with", "WITH"); err != nil {
		return nil, err
	}
	if st.Replication, st.DurableWrites, err = p.keyspaceProperties(); err != nil {
		return nil, err
	}
	return st, nil
}

// keyspaceProperties parses "prop = value [AND ...]" after WITH.
func (p *parser) keyspaceProperties() (*schema.Replication, *bool, error) {
	var repl *schema.Replication
	var durable *bool
	seen := map[string]bool{}
	for {
		nameTok := p.peek()
		prop, err := p.ident("a keyspace property (replication or durable_writes)")
		if err != nil {
			return nil, nil, err
		}
		if seen[prop] {
			return nil, nil, p.errAt(nameTok, "property "+clip.String(prop)+" given twice")
		}
		seen[prop] = true
		if err := p.expectPunct("="); err != nil {
			return nil, nil, err
		}
		valTok := p.peek()
		v, err := p.propertyValue()
		if err != nil {
			return nil, nil, err
		}
		switch prop {
		case "replication":
			r, err := p.replication(valTok, v)
			if err != nil {
				return nil, nil, err
			}
			repl = &r
		case "durable_writes":
			b, ok := boolean(v)
			if !ok {
				return nil, nil, p.errAt(valTok, "durable_writes must be true or false")
			}
			durable = &b
		default:
			return nil, nil, p.errAt(nameTok, "unknown keyspace property "+clip.Quote(prop)+" (expected replication or durable_writes)")
		}
		if !p.keyword("and") {
			return repl, durable, nil
		}
	}
}

// replication turns the replication map into a schema.Replication.
func (p *parser) replication(at token, v cqltext.Term) (schema.Replication, error) {
	var r schema.Replication
	if v.Kind != cqltext.KindMap {
		return r, p.errAt(at, "replication must be a map like {'class': 'SimpleStrategy', 'replication_factor': 1}")
	}
	for key, value := range pairs(v) {
		if key.Kind != cqltext.KindString {
			return r, p.errAt(at, "replication option names must be strings")
		}
		val, ok := scalarText(value)
		if !ok {
			return r, p.errAt(at, "replication option "+clip.Quote(key.Text)+" must be a string or a number")
		}
		if key.Text == "class" {
			r.Class = val
			continue
		}
		if r.Options == nil {
			r.Options = map[string]string{}
		}
		if _, dup := r.Options[key.Text]; dup {
			return r, p.errAt(at, "replication option "+clip.Quote(key.Text)+" given twice")
		}
		r.Options[key.Text] = val
	}
	return r, nil
}

// createTable parses the rest of CREATE TABLE.
func (p *parser) createTable() (schema.Statement, error) {
	st := &schema.CreateTable{}
	var err error
	if st.IfNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	if st.Keyspace, st.Name, err = p.qualifiedName("a table name"); err != nil {
		return nil, err
	}
	if p.keyword("like") {
		return p.createTableLike(st.IfNotExists, st.Keyspace, st.Name)
	}
	if !p.punct("(") {
		return nil, p.unexpected("'(' or LIKE")
	}
	pkClause := false
	for {
		afterColumn := "',' or ')'"
		if isKeyword(p.peek(), "primary") {
			if pkClause {
				return nil, p.errAt(p.peek(), "PRIMARY KEY clause given twice")
			}
			pkClause = true
			if err := p.primaryKeyClause(st); err != nil {
				return nil, err
			}
		} else {
			if err := p.columnDef(st); err != nil {
				return nil, err
			}
			afterColumn = expectedAfterColumn(st.Columns[len(st.Columns)-1])
		}
		if p.punct(")") {
			break
		}
		if !p.punct(",") {
			return nil, p.unexpected(afterColumn)
		}
		if p.emptyItems() {
			break
		}
	}
	if p.keyword("with") {
		if err := p.tableProperties(st); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// expectedAfterColumn is what may follow column definition cd, for the
// error when something else does. The texts are constants: they are
// chosen for every column parsed, and needed only on an error.
func expectedAfterColumn(cd schema.ColumnDef) string {
	switch {
	case cd.PrimaryKey:
		return "',' or ')'"
	case cd.Mask != nil:
		return "PRIMARY KEY, ',' or ')'"
	case cd.Static:
		return "MASKED WITH, PRIMARY KEY, ',' or ')'"
	default:
		return "STATIC, MASKED WITH, PRIMARY KEY, ',' or ')'"
	}
}

// isIDProperty reports whether the property at t, the next token, is
// "id = ...".
func isIDProperty(p *parser, t token) bool {
	return isKeyword(t, "id") && p.peekAt(1).kind == tokPunct && p.peekAt(1).val == "="
}

// idProperty parses "id = uuid" (a UUID or a string) into *id, refusing a
// second one and an empty id.
func (p *parser) idProperty(id *string) error {
	t := p.peek()
	if *id != "" {
		return p.errAt(t, "property id given twice")
	}
	p.i += 2
	v := p.peek()
	if v.kind != tokUUID && v.kind != tokString {
		return p.unexpected("a UUID")
	}
	p.i++
	if *id = v.val; *id == "" {
		return p.errAt(v, "empty table id")
	}
	return nil
}

// columnDef parses "name type [STATIC] [MASKED WITH ...] [PRIMARY KEY]".
func (p *parser) columnDef(st *schema.CreateTable) error {
	name, err := p.ident("a column name or PRIMARY KEY")
	if err != nil {
		return err
	}
	typ, err := p.typ(0)
	if err != nil {
		return err
	}
	cd := schema.ColumnDef{Name: name, Type: typ}
	if p.keyword("static") {
		cd.Static = true
	}
	if cd.Mask, err = p.maybeMask(); err != nil {
		return err
	}
	if err := p.refuseCheck(); err != nil {
		return err
	}
	if p.keyword("primary") {
		if err := p.expectKeyword("key", "KEY"); err != nil {
			return err
		}
		cd.PrimaryKey = true
	}
	if err := p.refuseCheck(); err != nil {
		return err
	}
	if st.Columns == nil {
		// Most tables have a few columns: one slice for them, not one
		// per doubling from a single column.
		st.Columns = make([]schema.ColumnDef, 0, 4)
	}
	st.Columns = append(st.Columns, cd)
	return nil
}

// refuseCheck refuses a CHECK column constraint at p (Cassandra trunk,
// after 5.0), by name.
func (p *parser) refuseCheck() error {
	if t := p.peek(); isKeyword(t, "check") {
		return p.errAt(t, "CHECK column constraints (Cassandra trunk, after 5.0) are not supported yet")
	}
	return nil
}

// primaryKeyClause parses "PRIMARY KEY (pk, ck...)" or
// "PRIMARY KEY ((pk1, pk2), ck...)".
func (p *parser) primaryKeyClause(st *schema.CreateTable) error {
	p.advance() // PRIMARY
	if err := p.expectKeyword("key", "KEY"); err != nil {
		return err
	}
	if err := p.expectPunct("("); err != nil {
		return err
	}
	if p.punct("(") {
		for {
			name, err := p.ident("a partition key column")
			if err != nil {
				return err
			}
			st.PartitionKey = append(st.PartitionKey, name)
			if p.punct(")") {
				break
			}
			if !p.punct(",") {
				return p.unexpected("',' or ')'")
			}
		}
	} else {
		name, err := p.ident("a partition key column or '('")
		if err != nil {
			return err
		}
		st.PartitionKey = []string{name}
	}
	for p.punct(",") {
		name, err := p.ident("a clustering column")
		if err != nil {
			return err
		}
		st.Clustering = append(st.Clustering, name)
	}
	return p.expectPunct(")")
}

// tableProperties parses the properties after WITH.
func (p *parser) tableProperties(st *schema.CreateTable) error {
	seenOrder := false
	for {
		if err := p.tableProperty(st, &seenOrder); err != nil {
			return err
		}
		if !p.keyword("and") {
			return nil
		}
	}
}

// tableProperty parses one property after WITH (or AND): CLUSTERING
// ORDER BY, which *seenOrder records, an id or "name = value".
func (p *parser) tableProperty(st *schema.CreateTable, seenOrder *bool) error {
	t := p.peek()
	switch {
	case isKeyword(t, "clustering") && isKeyword(p.peekAt(1), "order"):
		if *seenOrder {
			return p.errAt(t, "CLUSTERING ORDER BY given twice")
		}
		*seenOrder = true
		return p.clusteringOrder(st)
	case isKeyword(t, "compact") && isKeyword(p.peekAt(1), "storage"):
		return p.errAt(t, "COMPACT STORAGE is not supported")
	case isKeyword(t, "clustering") && !isKeyword(p.peekAt(1), "order"):
		p.i++
		return p.unexpected("ORDER")
	case isIDProperty(p, t):
		return p.idProperty(&st.ID)
	case t.kind == tokIdent, t.kind == tokQuoted:
		return p.property(&st.Options)
	}
	return p.unexpected("a table property or CLUSTERING ORDER BY")
}

// property parses "name = value" into opts, rejecting unknown names at the
// name (schema.Apply validates the value). A property Cassandra removed
// parses, so that Apply refuses it saying so.
func (p *parser) property(opts *map[string]string) error {
	t := p.advance()
	if !schema.IsTableProperty(t.val) && !schema.IsRemovedTableProperty(t.val) {
		return p.errAt(t, "unknown table property "+clip.Quote(t.val))
	}
	if err := p.expectPunct("="); err != nil {
		return err
	}
	v, err := p.propertyValue()
	if err != nil {
		return err
	}
	if *opts == nil {
		*opts = map[string]string{}
	}
	if _, dup := (*opts)[t.val]; dup {
		return p.errAt(t, "property "+clip.String(t.val)+" given twice")
	}
	(*opts)[t.val] = v.String()
	return nil
}

// clusteringOrder parses "CLUSTERING ORDER BY (c [ASC|DESC], ...)".
func (p *parser) clusteringOrder(st *schema.CreateTable) error {
	p.i += 2 // CLUSTERING ORDER
	if err := p.expectKeyword("by", "BY"); err != nil {
		return err
	}
	if err := p.expectPunct("("); err != nil {
		return err
	}
	for {
		name, err := p.ident("a clustering column")
		if err != nil {
			return err
		}
		cc := schema.ClusteringColumn{Name: name, Order: schema.Asc}
		switch {
		case p.keyword("asc"):
		case p.keyword("desc"):
			cc.Order = schema.Desc
		}
		st.ClusteringOrder = append(st.ClusteringOrder, cc)
		if p.punct(")") {
			return nil
		}
		if !p.punct(",") {
			return p.unexpected("ASC, DESC, ',' or ')'")
		}
	}
}

// typ parses a CQL type. Names that are not native or collection types
// are user types, [keyspace.]name; schema.Apply checks that they exist.
func (p *parser) typ(depth int) (schema.Type, error) {
	t := p.peek()
	if depth >= schema.MaxTypeDepth {
		return nil, p.errAt(t, "type nesting exceeds the limit of "+strconv.Itoa(schema.MaxTypeDepth)+" levels")
	}
	if t.kind == tokString {
		return nil, p.errAt(t, "custom types named by their class ("+clip.Quote(t.val)+") are not supported: a legacy form; give a CQL type")
	}
	if t.kind != tokIdent && t.kind != tokQuoted {
		return nil, p.unexpected("a column type")
	}
	if t.kind == tokIdent {
		if nt, ok := schema.NativeTypeByName(t.val); ok {
			p.i++
			return nt, nil
		}
	}
	param := func() (schema.Type, error) { return p.typ(depth + 1) }
	isCtor := t.kind == tokIdent && p.peekAt(1).kind == tokPunct && p.peekAt(1).val == "<"
	switch v := t.val; {
	case isCtor && (v == "list" || v == "set" || v == "frozen"):
		p.i++
		if err := p.expectPunct("<"); err != nil {
			return nil, err
		}
		e, err := param()
		if err != nil {
			return nil, err
		}
		if err := p.expectPunct(">"); err != nil {
			return nil, err
		}
		switch v {
		case "list":
			return schema.ListType{Elem: e}, nil
		case "set":
			return schema.SetType{Elem: e}, nil
		}
		return schema.FrozenType{Inner: e}, nil
	case isCtor && v == "map":
		p.i++
		if err := p.expectPunct("<"); err != nil {
			return nil, err
		}
		k, err := param()
		if err != nil {
			return nil, err
		}
		if err := p.expectPunct(","); err != nil {
			return nil, err
		}
		val, err := param()
		if err != nil {
			return nil, err
		}
		return schema.MapType{Key: k, Value: val}, p.expectPunct(">")
	case isCtor && v == "tuple":
		p.i++
		if err := p.expectPunct("<"); err != nil {
			return nil, err
		}
		var tt schema.TupleType
		for {
			e, err := param()
			if err != nil {
				return nil, err
			}
			tt.Elems = append(tt.Elems, e)
			if p.punct(">") {
				return tt, nil
			}
			if !p.punct(",") {
				return nil, p.unexpected("',' or '>'")
			}
		}
	case isCtor && v == "vector":
		p.i++
		if err := p.expectPunct("<"); err != nil {
			return nil, err
		}
		e, err := param()
		if err != nil {
			return nil, err
		}
		if err := p.expectPunct(","); err != nil {
			return nil, err
		}
		dt := p.peek()
		if dt.kind != tokInt {
			return nil, p.unexpected("a vector dimension")
		}
		p.i++
		n, err := strconv.Atoi(dt.val)
		if err != nil || n <= 0 {
			return nil, p.errAt(dt, "vector dimension must be a positive integer")
		}
		return schema.VectorType{Elem: e, Dimension: n}, p.expectPunct(">")
	case t.kind == tokIdent && (v == "list" || v == "set" || v == "frozen" || v == "map" || v == "tuple" || v == "vector"):
		p.i++
		return nil, p.unexpected("'<'")
	}
	ks, name, err := p.qualifiedName("a column type")
	if err != nil {
		return nil, err
	}
	return schema.UserTypeRef{Keyspace: ks, Name: name}, nil
}
