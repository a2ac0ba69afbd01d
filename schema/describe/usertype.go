package describe

import (
	"strings"

	"github.com/metalog/metalog/schema"
)

// UserType returns the CREATE TYPE statement of ut.
func UserType(ut *schema.UserType) string {
	var b strings.Builder
	writeUserType(&b, ut)
	return b.String()
}

// writeUserType writes what UserType returns.
func writeUserType(b *strings.Builder, ut *schema.UserType) {
	writeCreateHead(b, "TYPE", ut.Keyspace, schema.QuoteTypeName(ut.Name))
	for i, f := range ut.Fields {
		writeMember(b, f.Name, f.Type)
		if i < len(ut.Fields)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString(");\n")
}
