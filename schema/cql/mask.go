package cql

import "github.com/metalog/metalog/schema"

// Column masks, Cassandra 5's dynamic data masking, as Parser.g's
// columnMask has them:
//
//	MASKED WITH DEFAULT
//	MASKED WITH [keyspace.]function([term, ...])
//
// after a column's type and STATIC in CREATE TABLE and ALTER TABLE ADD,
// and in "ALTER TABLE t ALTER [IF EXISTS] c MASKED WITH ..." and "ALTER
// [IF EXISTS] c DROP MASKED". schema.Apply checks the function and its
// arguments.

// maybeMask parses a column mask when MASKED is next; nil otherwise.
func (p *parser) maybeMask() (*schema.MaskDef, error) {
	if !isKeyword(p.peek(), "masked") {
		return nil, nil
	}
	return p.mask()
}

// mask parses "MASKED WITH DEFAULT" or "MASKED WITH [ks.]fn(args)".
func (p *parser) mask() (*schema.MaskDef, error) {
	p.i++ // MASKED
	if err := p.expectKeyword("with", "WITH"); err != nil {
		return nil, err
	}
	if next := p.peekAt(1); isKeyword(p.peek(), "default") && !(next.kind == tokPunct && (next.val == "(" || next.val == ".")) {
		p.i++
		return &schema.MaskDef{Function: "mask_default"}, nil
	}
	def := &schema.MaskDef{}
	var err error
	if def.Keyspace, def.Function, err = p.qualifiedFunctionName("a masking function name or DEFAULT"); err != nil {
		return nil, err
	}
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	if p.punct(")") {
		return def, nil
	}
	for {
		a, err := p.maskArg()
		if err != nil {
			return nil, err
		}
		def.Args = append(def.Args, a)
		if p.punct(")") {
			return def, nil
		}
		if !p.punct(",") {
			return nil, p.unexpected("',' or ')'")
		}
	}
}

// maskArg parses one argument of a mask: null or a term.
func (p *parser) maskArg() (schema.Literal, error) {
	if p.keyword("null") {
		return schema.Literal{Kind: schema.LitNull}, nil
	}
	return p.term()
}

// alterColumn parses the rest of "ALTER TABLE t ALTER" (after ALTER): a
// mask set or dropped, or the forms refused by name.
func (p *parser) alterColumn(st *schema.AlterTable, at token) error {
	// ALTER column: TYPE (removed from Cassandra), MASKED WITH or DROP
	// MASKED (data masking), CHECK or DROP CHECK (constraints).
	ifExists := isKeyword(p.peek(), "if") && isKeyword(p.peekAt(1), "exists")
	off := 1
	if ifExists {
		off = 3
	}
	switch what := p.peekAt(off); {
	case isKeyword(what, "check"), isKeyword(what, "drop") && isKeyword(p.peekAt(off+1), "check"):
		return p.errAt(at, "ALTER TABLE ... ALTER column CHECK (column constraints) is not supported yet")
	case !isKeyword(what, "masked") && !(isKeyword(what, "drop") && isKeyword(p.peekAt(off+1), "masked")):
		return p.errAt(at, "ALTER TABLE ... ALTER column TYPE is not supported (Cassandra removed it)")
	}
	var err error
	if st.ClauseIf, err = p.ifExists(); err != nil {
		return err
	}
	am := &schema.AlterMask{}
	if am.Column, err = p.ident("a column name"); err != nil {
		return err
	}
	if p.keyword("drop") {
		p.i++ // MASKED
	} else if am.Mask, err = p.mask(); err != nil {
		return err
	}
	st.Mask = am
	return nil
}
