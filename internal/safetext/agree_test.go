package safetext_test

import (
	"testing"
	"unicode/utf8"

	"github.com/metalog/metalog/access"
	"github.com/metalog/metalog/internal/safetext"
	"github.com/metalog/metalog/schema"
)

// TestNameRulesRefuseWhatIsEscaped: the names admission refuses (a new
// column, by schema.Admit, which imports nothing of ours and keeps its
// own list) and the member and token names access.CheckName refuses are
// exactly, among the runes that are not white space, what the CLI
// escapes: a name that is admitted always shows as itself.
func TestNameRulesRefuseWhatIsEscaped(t *testing.T) {
	for r := rune(0); r <= 0x3000; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		name := "c" + string(r)
		st := &schema.CreateTable{Keyspace: "shop", Name: "t", Columns: []schema.ColumnDef{{Name: name, Type: schema.TypeInt}}}
		if refused := schema.Admit(st) != nil; refused != safetext.Unsafe(r) {
			t.Errorf("%U: schema.Admit refuses a column named with it: %v; safetext.Unsafe: %v", r, refused, safetext.Unsafe(r))
		}
		if safetext.Unsafe(r) && access.CheckName(name) == nil {
			t.Errorf("%U: access.CheckName accepts a name with it, which the CLI escapes", r)
		}
	}
}
