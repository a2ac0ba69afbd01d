package cqlserver_test

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/metalog/metalog/cqlserver/internal/systemschema"
)

// protocolDoc is the page that says what the CQL listener serves.
const protocolDoc = "../docs/cql-protocol.md"

// docColumn is one row of a system_schema table on the page.
type docColumn struct{ name, typ, kind string }

// docSystemSchema reads the system_schema tables the page lists: each
// "### system_schema.<table>" heading of its "## system_schema" section
// and the rows of the table under it, "| `column` | `type` | kind |".
func docSystemSchema(t *testing.T) (map[string][]docColumn, []string) {
	t.Helper()
	f, err := os.Open(protocolDoc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tables := map[string][]docColumn{}
	var order []string
	in, table := false, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in, table = line == "## system_schema", ""
		case !in:
		case strings.HasPrefix(line, "### "):
			name, ok := strings.CutPrefix(line, "### system_schema.")
			table = ""
			if ok {
				table = name
				order = append(order, name)
				tables[name] = nil
			}
		case table != "" && strings.HasPrefix(line, "| `"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			if len(cells) != 3 {
				t.Fatalf("%s: row of system_schema.%s has %d cells: %s", protocolDoc, table, len(cells), line)
			}
			for i := range cells {
				cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "`")
			}
			tables[table] = append(tables[table], docColumn{cells[0], cells[1], cells[2]})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return tables, order
}

// docKind is how the page writes a column's kind.
func docKind(k systemschema.Kind) string {
	switch k {
	case systemschema.PartitionKey:
		return "partition key"
	case systemschema.Clustering:
		return "clustering"
	}
	return ""
}

// TestDocsListSystemSchema checks that docs/cql-protocol.md lists every
// system_schema table the server serves, each with every column, its
// type and kind, in SELECT * order, and lists nothing the server does not
// serve, so that the page cannot drift from the code.
func TestDocsListSystemSchema(t *testing.T) {
	doc, order := docSystemSchema(t)
	served := map[string]bool{}
	for _, tb := range systemschema.All() {
		served[tb.Name] = true
		cols, ok := doc[tb.Name]
		if !ok {
			t.Errorf("%s lists no table system_schema.%s", protocolDoc, tb.Name)
			continue
		}
		var want []docColumn
		for _, c := range tb.Columns {
			want = append(want, docColumn{c.Name, c.Type, docKind(c.Kind)})
		}
		for i := 0; i < len(want) || i < len(cols); i++ {
			switch {
			case i >= len(cols):
				t.Errorf("%s: system_schema.%s lacks column %+v", protocolDoc, tb.Name, want[i])
			case i >= len(want):
				t.Errorf("%s: system_schema.%s lists column %+v, which is not served", protocolDoc, tb.Name, cols[i])
			case cols[i] != want[i]:
				t.Errorf("%s: system_schema.%s column %d is %+v, served %+v", protocolDoc, tb.Name, i+1, cols[i], want[i])
			}
		}
	}
	for _, name := range order {
		if !served[name] {
			t.Errorf("%s lists system_schema.%s, which is not served", protocolDoc, name)
		}
	}
	if len(order) != len(doc) {
		t.Errorf("%s lists a system_schema table twice: %v", protocolDoc, order)
	}
}
