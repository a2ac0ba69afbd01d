package cql

import (
	"strconv"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/internal/cqltext"
	"github.com/metalog/metalog/schema"
)

// createType parses the rest of CREATE TYPE.
func (p *parser) createType() (schema.Statement, error) {
	st := &schema.CreateType{}
	var err error
	if st.IfNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	if st.Keyspace, st.Name, err = p.qualifiedName("a type name"); err != nil {
		return nil, err
	}
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	for {
		f, err := p.field()
		if err != nil {
			return nil, err
		}
		st.Fields = append(st.Fields, f)
		if p.punct(")") {
			return st, nil
		}
		if !p.punct(",") {
			return nil, p.unexpected("',' or ')'")
		}
		if p.emptyItems() {
			return st, nil
		}
	}
}

// field parses "name type".
func (p *parser) field() (schema.Field, error) {
	name, err := p.ident("a field name")
	if err != nil {
		return schema.Field{}, err
	}
	typ, err := p.typ(0)
	if err != nil {
		return schema.Field{}, err
	}
	return schema.Field{Name: name, Type: typ}, nil
}

// renames parses "a TO b [AND c TO d ...]".
func (p *parser) renames(what string) ([]schema.RenameField, error) {
	var out []schema.RenameField
	for {
		from, err := p.ident("a " + what + " name")
		if err != nil {
			return nil, err
		}
		if err := p.expectKeyword("to", "TO"); err != nil {
			return nil, err
		}
		to, err := p.ident("a new " + what + " name")
		if err != nil {
			return nil, err
		}
		out = append(out, schema.RenameField{From: from, To: to})
		if !p.keyword("and") {
			return out, nil
		}
	}
}

// alterType parses the rest of ALTER TYPE.
func (p *parser) alterType() (schema.Statement, error) {
	st := &schema.AlterType{}
	var err error
	if st.IfExists, err = p.ifExists(); err != nil {
		return nil, err
	}
	if st.Keyspace, st.Name, err = p.qualifiedName("a type name"); err != nil {
		return nil, err
	}
	switch t := p.peek(); {
	case p.keyword("add"):
		if st.ClauseIf, err = p.ifNotExists(); err != nil {
			return nil, err
		}
		f, err := p.field()
		if err != nil {
			return nil, err
		}
		st.Add = &f
	case p.keyword("rename"):
		if st.ClauseIf, err = p.ifExists(); err != nil {
			return nil, err
		}
		if st.Rename, err = p.renames("field"); err != nil {
			return nil, err
		}
	case p.keyword("alter"):
		return nil, p.errAt(t, "ALTER TYPE ... ALTER field TYPE is not supported (Cassandra removed it)")
	default:
		return nil, p.unexpected("ADD or RENAME")
	}
	return st, nil
}

// alterTable parses the rest of ALTER TABLE.
func (p *parser) alterTable() (schema.Statement, error) {
	st := &schema.AlterTable{}
	var err error
	if st.IfExists, err = p.ifExists(); err != nil {
		return nil, err
	}
	if st.Keyspace, st.Name, err = p.qualifiedName("a table name"); err != nil {
		return nil, err
	}
	switch t := p.peek(); {
	case p.keyword("add"):
		if st.ClauseIf, err = p.ifNotExists(); err != nil {
			return nil, err
		}
		paren := p.punct("(")
		for {
			name, err := p.ident("a column name")
			if err != nil {
				return nil, err
			}
			typ, err := p.typ(0)
			if err != nil {
				return nil, err
			}
			cd := schema.ColumnDef{Name: name, Type: typ, Static: p.keyword("static")}
			if cd.Mask, err = p.maybeMask(); err != nil {
				return nil, err
			}
			st.Add = append(st.Add, cd)
			if isKeyword(p.peek(), "primary") {
				return nil, p.errAt(p.peek(), "ALTER TABLE ... ADD cannot add PRIMARY KEY columns")
			}
			if !p.punct(",") {
				break
			}
		}
		if paren {
			if err := p.expectPunct(")"); err != nil {
				return nil, err
			}
		}
	case isKeyword(t, "drop") && isKeyword(p.peekAt(1), "compact") && isKeyword(p.peekAt(2), "storage"):
		return nil, p.errAt(t, "DROP COMPACT STORAGE is not supported")
	case p.keyword("drop"):
		if st.ClauseIf, err = p.ifExists(); err != nil {
			return nil, err
		}
		paren := p.punct("(")
		for {
			name, err := p.ident("a column name")
			if err != nil {
				return nil, err
			}
			st.Drop = append(st.Drop, name)
			if !p.punct(",") {
				break
			}
		}
		if paren {
			if err := p.expectPunct(")"); err != nil {
				return nil, err
			}
		}
		if p.keyword("using") {
			if err := p.expectKeyword("timestamp", "TIMESTAMP"); err != nil {
				return nil, err
			}
			ts := p.peek()
			n, err := strconv.ParseUint(ts.val, 10, 64)
			if ts.kind != tokInt || err != nil || n == 0 {
				return nil, p.unexpected("a positive integer timestamp")
			}
			p.i++
			st.DropEpoch = n
		}
	case p.keyword("rename"):
		if st.ClauseIf, err = p.ifExists(); err != nil {
			return nil, err
		}
		if st.Rename, err = p.renames("column"); err != nil {
			return nil, err
		}
	case p.keyword("with"):
		if err := p.alterProperties(&st.Options, "table"); err != nil {
			return nil, err
		}
	case p.keyword("alter"):
		if err := p.alterColumn(st, t); err != nil {
			return nil, err
		}
	default:
		return nil, p.unexpected("ADD, DROP, RENAME, ALTER or WITH")
	}
	return st, nil
}

// alterProperties parses the properties after the WITH of ALTER TABLE
// or ALTER MATERIALIZED VIEW (what is "table" or "view"): table
// properties only, as the clustering order and the id cannot change.
func (p *parser) alterProperties(opts *map[string]string, what string) error {
	for {
		t := p.peek()
		switch {
		case isKeyword(t, "clustering") && isKeyword(p.peekAt(1), "order"):
			return p.errAt(t, "the clustering order of a "+what+" cannot be changed")
		case isKeyword(t, "compact") && isKeyword(p.peekAt(1), "storage"):
			return p.errAt(t, "COMPACT STORAGE is not supported")
		case isKeyword(t, "id"):
			return p.errAt(t, "the "+what+" id cannot be changed")
		case t.kind == tokIdent, t.kind == tokQuoted:
			if err := p.property(opts); err != nil {
				return err
			}
		default:
			return p.unexpected("a " + what + " property")
		}
		if !p.keyword("and") {
			return nil
		}
	}
}

// createIndex parses the rest of CREATE [CUSTOM] INDEX.
func (p *parser) createIndex(custom bool) (schema.Statement, error) {
	st := &schema.CreateIndex{Custom: custom}
	var err error
	if st.IfNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	if !isKeyword(p.peek(), "on") {
		if st.Name, err = p.ident("an index name or ON"); err != nil {
			return nil, err
		}
	}
	if err := p.expectKeyword("on", "ON"); err != nil {
		return nil, err
	}
	if st.Keyspace, st.Table, err = p.qualifiedName("a table name"); err != nil {
		return nil, err
	}
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	kinds := map[string]schema.TargetKind{"keys": schema.TargetKeys, "values": schema.TargetValues, "entries": schema.TargetEntries, "full": schema.TargetFull}
	if t := p.peek(); t.kind == tokIdent && p.peekAt(1).kind == tokPunct && p.peekAt(1).val == "(" {
		kind, ok := kinds[t.val]
		if !ok {
			return nil, p.errAt(t, "unknown index target function "+clip.Quote(t.val)+" (expected keys, values, entries or full)")
		}
		p.i += 2
		if st.Target.Column, err = p.ident("a column name"); err != nil {
			return nil, err
		}
		st.Target.Kind = kind
		if err := p.expectPunct(")"); err != nil {
			return nil, err
		}
	} else if t := p.peek(); st.Custom && isPunct(t, ")") {
		return nil, p.errAt(t, "a custom index without a target column is not supported: name the column it indexes")
	} else if st.Target.Column, err = p.ident("a column name or keys(...), values(...), entries(...), full(...)"); err != nil {
		return nil, err
	}
	if p.punct(",") {
		return nil, p.errAt(p.toks[p.i-1], "indexes on several columns are not supported")
	}
	if err := p.expectPunct(")"); err != nil {
		return nil, err
	}
	if p.keyword("using") {
		t := p.peek()
		if t.kind != tokString {
			return nil, p.unexpected("the index class as a string")
		}
		p.i++
		if t.val == "" {
			return nil, p.errAt(t, "empty index class")
		}
		st.Class = t.val
		if p.keyword("with") {
			if err := p.expectKeyword("options", "OPTIONS"); err != nil {
				return nil, err
			}
			if err := p.expectPunct("="); err != nil {
				return nil, err
			}
			vt := p.peek()
			v, err := p.term()
			if err != nil {
				return nil, err
			}
			if v.Kind != cqltext.KindMap {
				return nil, p.errAt(vt, "index OPTIONS must be a map of strings")
			}
			st.Options = map[string]string{}
			for key, value := range pairs(v) {
				k, ok1 := scalarText(key)
				val, ok2 := scalarText(value)
				if !ok1 || !ok2 || key.Kind != cqltext.KindString {
					return nil, p.errAt(vt, "index OPTIONS must be a map of strings")
				}
				if _, dup := st.Options[k]; dup {
					return nil, p.errAt(vt, "index option "+clip.Quote(k)+" given twice")
				}
				st.Options[k] = val
			}
		}
	} else if custom {
		return nil, p.unexpected("USING 'class' (a CUSTOM index needs its class)")
	} else if isKeyword(p.peek(), "with") {
		return nil, p.errAt(p.peek(), "WITH OPTIONS needs USING 'class'")
	}
	return st, nil
}
