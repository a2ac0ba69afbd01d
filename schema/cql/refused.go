package cql

import "strings"

// Why metalog refuses the statements CQL has besides schema ones, and
// cqlsh's own commands, which a schema file taken from a cqlsh session
// may hold. Each is refused by name at its first word, before anything of
// the request applies.
const (
	whyData  = "is a data statement: metalog takes schema statements (CREATE, ALTER, DROP and USE); run it against the database itself"
	whyAuth  = "is access control, not schema: metalog keeps no roles or permissions; run it against the database itself"
	whyCqlsh = "is a cqlsh command, not CQL: metalog runs CQL schema statements only"
)

// dataStatements are the first words of CQL's data statements.
var dataStatements = map[string]bool{
	"insert": true, "update": true, "delete": true, "select": true, "truncate": true, "begin": true, "apply": true,
}

// authStatements are the first words of CQL's access control statements
// that are not CREATE, ALTER or DROP of a role or user.
var authStatements = map[string]bool{"grant": true, "revoke": true, "list": true, "add": true}

// authObjects are what CREATE, ALTER and DROP of access control name.
var authObjects = map[string]bool{"role": true, "user": true, "identity": true}

// cqlshCommands are cqlsh's commands, with what to do instead where
// metalog has it.
var cqlshCommands = map[string]string{
	"source": "; give the file to metalog exec -f", "describe": "; print the schema with metalog describe",
	"desc": "; print the schema with metalog describe", "consistency": "", "serial": "", "copy": "", "capture": "",
	"tracing": "", "paging": "", "expand": "", "login": "", "exit": "", "quit": "", "show": "", "clear": "",
	"cls": "", "help": "", "debug": "",
}

// refuseNotSchema returns the error of a statement that is not a schema
// statement, nil for any other: p is at the statement's first token.
func (p *parser) refuseNotSchema() error {
	first, second := p.peek(), p.peekAt(1)
	if first.kind != tokIdent {
		return nil
	}
	name := strings.ToUpper(first.val)
	switch {
	case dataStatements[first.val]:
		if first.val == "begin" || first.val == "apply" {
			name += " BATCH"
		}
		return p.errAt(first, name+" "+whyData)
	case authStatements[first.val]:
		if first.val == "add" && !isKeyword(second, "identity") {
			return nil
		}
		return p.errAt(first, name+" "+whyAuth)
	case (first.val == "create" || first.val == "alter" || first.val == "drop") && second.kind == tokIdent && authObjects[second.val]:
		return p.errAt(first, name+" "+strings.ToUpper(second.val)+" "+whyAuth)
	}
	if hint, ok := cqlshCommands[first.val]; ok {
		return p.errAt(first, name+" "+whyCqlsh+hint)
	}
	return nil
}
