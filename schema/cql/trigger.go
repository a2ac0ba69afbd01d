package cql

import "github.com/metalog/metalog/schema"

// createTrigger parses the rest of CREATE TRIGGER, after TRIGGER:
// [IF NOT EXISTS] name ON [ks.]table USING 'class'. An empty class is
// refused here, as CREATE INDEX refuses an empty index class; the name and
// the table are checked by schema.Apply.
func (p *parser) createTrigger() (schema.Statement, error) {
	st := &schema.CreateTrigger{}
	var err error
	if st.IfNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	if st.Name, st.Keyspace, st.Table, err = p.triggerOn(); err != nil {
		return nil, err
	}
	if err := p.expectKeyword("using", "USING"); err != nil {
		return nil, err
	}
	t := p.peek()
	if t.kind != tokString {
		return nil, p.unexpected("the trigger class as a string")
	}
	p.i++
	if t.val == "" {
		return nil, p.errAt(t, "empty trigger class")
	}
	st.Class = t.val
	return st, nil
}

// dropTrigger parses the rest of DROP TRIGGER, after TRIGGER:
// [IF EXISTS] name ON [ks.]table.
func (p *parser) dropTrigger() (schema.Statement, error) {
	st := &schema.DropTrigger{}
	var err error
	if st.IfExists, err = p.ifExists(); err != nil {
		return nil, err
	}
	if st.Name, st.Keyspace, st.Table, err = p.triggerOn(); err != nil {
		return nil, err
	}
	return st, nil
}

// triggerOn parses "name ON [ks.]table", which both trigger statements
// have: a trigger is named within its table.
func (p *parser) triggerOn() (name, ks, table string, err error) {
	if name, err = p.ident("a trigger name"); err != nil {
		return "", "", "", err
	}
	if err = p.expectKeyword("on", "ON"); err != nil {
		return "", "", "", err
	}
	if ks, table, err = p.qualifiedName("a table name"); err != nil {
		return "", "", "", err
	}
	return name, ks, table, nil
}
