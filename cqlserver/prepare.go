package cqlserver

import (
	"crypto/sha256"
	"sync"

	"github.com/metalog/metalog/cqlserver/internal/wire"
)

// maxPrepared bounds the statements a Server keeps prepared; past it, one
// is forgotten for each new one (a driver prepares it again when EXECUTE
// is answered UNPREPARED).
const maxPrepared = 1024

// prepared is the Server's prepared SELECTs, shared by its connections.
type prepared struct {
	mu    sync.Mutex        // guards texts
	texts map[string]string // by id: the query text
}

func (p *prepared) put(id, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.texts == nil {
		p.texts = map[string]string{}
	}
	if _, ok := p.texts[id]; !ok && len(p.texts) >= maxPrepared {
		for k := range p.texts {
			delete(p.texts, k)
			break
		}
	}
	p.texts[id] = text
}

func (p *prepared) get(id string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	text, ok := p.texts[id]
	return text, ok
}

// prepare answers PREPARE of a SELECT the server serves: its bind markers
// (text values named after the column they restrict) and the columns of
// its result. Anything else is refused.
func (c *conn) prepare(f wire.Frame, m *wire.Prepare) *pending {
	if w := firstWord(m.Query); w == "describe" || w == "desc" {
		return c.prepareDescribe(f, m)
	}
	if firstWord(m.Query) != "select" {
		return c.errorf(f, wire.CodeInvalid, "only the SELECTs of system tables and DESCRIBE can be prepared: metalog serves DDL as plain queries")
	}
	st, err := parseSelect(m.Query)
	if err != nil {
		return c.errorf(f, wire.CodeInvalid, "%v", unsupported(err, m.Query))
	}
	ks := c.keyspace
	if m.Keyspace != "" {
		ks = m.Keyspace
	}
	bindCols := make([]wire.ColumnSpec, st.markers)
	for _, w := range st.where {
		if w.marker {
			bindCols[w.index] = wire.ColumnSpec{Name: w.column, Type: text}
		}
	}
	t, err := c.selectTable(st, ks, pageRequest{noRows: true}) // the columns
	if err != nil {
		return c.reply(f, errorResponse(err, wire.One), nil)
	}
	for i := range bindCols {
		bindCols[i].Keyspace, bindCols[i].Table = t.keyspace, t.name
	}
	rows, err := t.encode(st.columns)
	if err != nil {
		return c.errorf(f, wire.CodeInvalid, "%v", err)
	}
	sum := sha256.Sum256([]byte(ks + "\x00" + m.Query))
	id := sum[:16]
	c.srv.prepared.put(string(id), m.Query)
	return c.reply(f, &wire.Prepared{ID: id, ResultMetadataID: id, Bind: wire.PreparedMetadata{Columns: bindCols}, Result: rows.Metadata}, nil)
}

// prepareDescribe answers PREPARE of a DESCRIBE as Cassandra does: no
// bind markers and no result metadata (the columns depend on what the
// name resolves to when it runs), the rows coming with their columns
// from EXECUTE.
func (c *conn) prepareDescribe(f wire.Frame, m *wire.Prepare) *pending {
	if _, err := parseDescribe(m.Query); err != nil {
		return c.errorf(f, wire.CodeSyntax, "%v", err)
	}
	sum := sha256.Sum256([]byte(m.Keyspace + "\x00" + m.Query))
	id := sum[:16]
	c.srv.prepared.put(string(id), m.Query)
	return c.reply(f, &wire.Prepared{ID: id, ResultMetadataID: id, Result: wire.RowsMetadata{NoMetadata: true}}, nil)
}

// execute answers EXECUTE of a prepared SELECT or DESCRIBE.
func (c *conn) execute(f wire.Frame, m *wire.Execute) *pending {
	text, ok := c.srv.prepared.get(string(m.ID))
	if !ok {
		return c.reply(f, &wire.Error{Code: wire.CodeUnprepared, Message: "unknown prepared statement", Detail: &wire.UnpreparedInfo{ID: m.ID}}, nil)
	}
	ks := c.keyspace
	if m.Params.Has(wire.QueryKeyspace) && m.Params.Keyspace != "" {
		ks = m.Params.Keyspace
	}
	if w := firstWord(text); w == "describe" || w == "desc" {
		return c.describeQuery(f, text, &m.Params, ks)
	}
	return c.selectQuery(f, text, &m.Params, ks)
}
