package cql

import "strings"

// unreservedKeywords are the keywords Cassandra's grammar lets stand as
// identifiers and as a bare property value (Parser.g's unreserved_keyword:
// basic_unreserved_keyword, the native type names of
// unreserved_function_keyword, and TTL, COUNT, WRITETIME, MAXWRITETIME,
// KEY, CAST, JSON and DISTINCT).
var unreservedKeywords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`keys as cluster clustering compact storage tables type types values map
		list filtering permission permissions keyspaces all user users role roles identity superuser superusers
		nosuperuser login nologin options password generated hashed exists custom trigger contains internals only
		static frozen tuple function functions aggregate aggregates sfunc stype finalfunc initcond returns language
		called input like per partition group datacenters cidrs access default mbean mbeans replace unset masked
		unmask select_masked vector ann between check indexes
		ascii bigint blob boolean counter decimal double duration float inet int smallint text timestamp tinyint
		uuid varchar varint timeuuid date time
		ttl count writetime maxwritetime key cast json distinct`) {
		m[w] = true
	}
	return m
}()

// propertyValue parses the value of a property (Parser.g's propertyValue
// or a map): a constant, a collection literal, or a bare unreserved
// keyword, which is the string of its text as written (`comment =
// static` is comment = 'static').
func (p *parser) propertyValue() (literal, error) {
	if t := p.peek(); t.kind == tokIdent && unreservedKeywords[t.val] {
		p.i++
		return literal{kind: litString, str: p.src[t.pos:t.end]}, nil
	}
	return p.term()
}
