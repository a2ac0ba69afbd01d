package cqlserver

import (
	"errors"
	"strings"

	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/api/apierr"
	"github.com/metalog/metalog/cqlserver/internal/wire"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/schema"
)

// query answers a QUERY: a SELECT of a system table, USE or DESCRIBE on
// the reader goroutine, anything else as DDL on a goroutine of its own,
// which queues the answer itself (query then returns nil).
func (c *conn) query(f wire.Frame, m *wire.Query) *pending {
	ks := c.keyspace
	if m.Params.Has(wire.QueryKeyspace) && m.Params.Keyspace != "" {
		ks = m.Params.Keyspace
	}
	switch firstWord(m.Query) {
	case "select":
		return c.selectQuery(f, m.Query, &m.Params, ks)
	case "use":
		return c.use(f, m.Query)
	case "describe", "desc":
		return c.describeQuery(f, m.Query, &m.Params, ks)
	}
	if why := c.session.ddlRefusal(); why != "" {
		return c.errorf(f, wire.CodeUnauthorized, "%s", why)
	}
	c.srv.wg.Add(1)
	c.ddls.Add(1)
	go func() {
		defer c.srv.wg.Done()
		defer c.ddls.Done()
		c.queue <- &pending{frame: c.ddl(f, m, ks)}
	}()
	return nil
}

// ddl runs text as one request of the member and answers with the schema
// change of its first applied statement.
func (c *conn) ddl(f wire.Frame, m *wire.Query, ks string) wire.Frame {
	out, err := c.srv.cfg.Writer.Execute(c.srv.ctx, member.Request{Statements: m.Query, Keyspace: ks,
		Principal: c.session.principal, Grants: c.session.grants})
	if err != nil {
		return wire.ResponseFrame(c.version, f.Stream, errorResponse(err, m.Params.Consistency), nil)
	}
	var warnings []string
	for _, w := range out.Warnings {
		warnings = append(warnings, w.Message)
	}
	return wire.ResponseFrame(c.version, f.Stream, schemaChange(out), warnings)
}

// schemaChange is the RESULT of an outcome: the change of its first
// applied statement, or VOID when none applied (IF [NOT] EXISTS).
func schemaChange(out metadata.Outcome) wire.Message {
	for _, r := range out.Results {
		if r.Result.Applied {
			return changeOf(r.Result)
		}
	}
	return &wire.Void{}
}

// changeOf maps a statement's result to Cassandra's schema change: an
// index or a trigger updates its table, a view is a table.
func changeOf(r schema.Result) *wire.SchemaChange {
	verb, noun, _ := strings.Cut(r.Kind, " ")
	sc := &wire.SchemaChange{Change: wire.Updated, Keyspace: r.Keyspace}
	switch verb {
	case "CREATE":
		sc.Change = wire.Created
	case "DROP":
		sc.Change = wire.Dropped
	}
	switch noun {
	case "KEYSPACE":
		sc.Target = wire.TargetKeyspace
	case "TABLE", "MATERIALIZED VIEW":
		sc.Target, sc.Name = wire.TargetTable, r.Table
	case "INDEX", "TRIGGER":
		sc.Change, sc.Target, sc.Name = wire.Updated, wire.TargetTable, r.Table
	case "TYPE":
		sc.Target, sc.Name = wire.TargetType, r.Name
	case "FUNCTION", "AGGREGATE":
		sc.Target = wire.TargetFunction
		if noun == "AGGREGATE" {
			sc.Target = wire.TargetAggregate
		}
		sc.Name, sc.ArgTypes = splitSignature(r.Name)
	default:
		sc.Target = wire.TargetKeyspace
	}
	return sc
}

// splitSignature splits "f(int,map<int,text>)" into its name and its
// argument types, cutting at the commas outside angle brackets.
func splitSignature(sig string) (string, []string) {
	name, rest, ok := strings.Cut(sig, "(")
	if !ok {
		return sig, nil
	}
	rest = strings.TrimSuffix(rest, ")")
	args := []string{}
	depth, start := 0, 0
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case '<':
			depth++
		case '>':
			depth--
		case ',':
			if depth == 0 {
				args = append(args, strings.TrimSpace(rest[start:i]))
				start = i + 1
			}
		}
	}
	if strings.TrimSpace(rest) != "" {
		args = append(args, strings.TrimSpace(rest[start:]))
	}
	return name, args
}

// use answers USE ks: SET_KEYSPACE if the keyspace exists.
func (c *conn) use(f wire.Frame, text string) *pending {
	toks, err := lex(text)
	if err != nil || len(toks) < 2 || (len(toks) == 3 && toks[2].text != ";") || len(toks) > 3 ||
		(toks[1].kind != tokIdent && toks[1].kind != tokQuoted) {
		return c.errorf(f, wire.CodeSyntax, "USE takes one keyspace name: %q", clipText(text))
	}
	ks := toks[1].text
	md, err := c.srv.cfg.Reader.Read(c.srv.ctx, 0, "", nil)
	if err != nil {
		return c.reply(f, errorResponse(err, wire.One), nil)
	}
	if _, ok := md.Schema.Keyspace(ks); !ok || !c.session.usable(ks) {
		return c.errorf(f, wire.CodeInvalid, "Keyspace '%s' does not exist", ks)
	}
	c.keyspace = ks
	return c.reply(f, &wire.SetKeyspace{Keyspace: ks}, nil)
}

// firstWord is the first word of a statement, lowercased, after blanks
// and comments.
func firstWord(text string) string {
	for {
		text = strings.TrimLeft(text, " \t\r\n")
		switch {
		case strings.HasPrefix(text, "--"), strings.HasPrefix(text, "//"):
			_, text, _ = strings.Cut(text, "\n")
			continue
		case strings.HasPrefix(text, "/*"):
			_, text, _ = strings.Cut(text, "*/")
			continue
		}
		break
	}
	end := strings.IndexFunc(text, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
	if end >= 0 {
		text = text[:end]
	}
	return strings.ToLower(text)
}

// clipText cuts a statement quoted in an error message.
func clipText(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// errorResponse maps a member error to the Cassandra error of its class,
// with the message the API answers with.
func errorResponse(err error, cl wire.Consistency) *wire.Error {
	var qe *queryError
	if errors.As(err, &qe) {
		return &wire.Error{Code: wire.CodeInvalid, Message: qe.msg}
	}
	msg := status.Convert(apierr.Status(err)).Message()
	e := &wire.Error{Code: wire.CodeServer, Message: msg}
	switch apierr.Classify(err) {
	case apierr.Syntax:
		e.Code = wire.CodeSyntax
	case apierr.Invalid, apierr.NotFound, apierr.Precondition, apierr.Guardrail, apierr.EpochConflict,
		apierr.PlanRefused, apierr.TooManyStatements:
		e.Code = wire.CodeInvalid
	case apierr.AlreadyExists:
		e.Code, e.Detail = wire.CodeAlreadyExists, alreadyExists(err)
	case apierr.PermissionDenied, apierr.OutOfScope:
		e.Code = wire.CodeUnauthorized
	case apierr.Unavailable:
		e.Code, e.Detail = wire.CodeUnavailable, &wire.UnavailableInfo{Consistency: cl, Required: 1}
	case apierr.RateLimited, apierr.NoSpace:
		e.Code = wire.CodeOverloaded
	case apierr.OutcomeUnknown, apierr.DeadlineExceeded:
		e.Code = wire.CodeWriteTimeout
		e.Detail = &wire.WriteTimeoutInfo{Consistency: cl, BlockFor: 1, WriteType: "SIMPLE"}
	}
	return e
}

// alreadyExists is the keyspace and table an ALREADY_EXISTS names, from
// the object of the schema error ("ks" or "ks.table", quoted as needed).
func alreadyExists(err error) *wire.AlreadyExistsInfo {
	var se *schema.Error
	if !errors.As(err, &se) {
		return &wire.AlreadyExistsInfo{}
	}
	toks, lexErr := lex(se.Object)
	switch {
	case lexErr != nil || len(toks) == 0:
		return &wire.AlreadyExistsInfo{Keyspace: se.Object}
	case len(toks) >= 3 && toks[1].text == ".":
		return &wire.AlreadyExistsInfo{Keyspace: toks[0].text, Table: toks[2].text}
	case strings.Contains(se.Statement, "KEYSPACE"):
		return &wire.AlreadyExistsInfo{Keyspace: toks[0].text}
	}
	return &wire.AlreadyExistsInfo{Table: toks[0].text}
}
