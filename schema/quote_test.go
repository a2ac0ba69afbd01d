package schema

import (
	"strings"
	"testing"
)

// TestQuoteStringClip checks the CQL-quoted clip: the quotes go round
// the cut text, the length after them.
func TestQuoteStringClip(t *testing.T) {
	a200 := strings.Repeat("a", 200)
	if got := quoteStringClip("it's" + a200); got != `'it''s`+strings.Repeat("a", 196)+`...' (204 bytes)` {
		t.Errorf("quoteStringClip = %q", got)
	}
	if got := quoteStringClip("it's"); got != `'it''s'` {
		t.Errorf("quoteStringClip = %q", got)
	}
}

// TestErrorClipsTheObject checks that an Error names a long object cut,
// and that statements with a 1 MB name keep their errors small.
func TestErrorClipsTheObject(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	base := mustApply(t, Schema{}, simpleKS("shop"), simpleTable("shop", "orders"))
	for _, st := range []Statement{
		simpleTable("shop", long),
		simpleTable(long, "t"),
		&DropTable{Keyspace: "shop", Name: long},
		&DropKeyspace{Name: long},
		&AlterTable{Keyspace: "shop", Name: "orders", Drop: []string{long}},
		&AlterTable{Keyspace: "shop", Name: "orders", Add: []ColumnDef{{Name: "w", Type: UserTypeRef{Name: long}}}},
		&CreateIndex{Keyspace: "shop", Name: long, Table: "orders", Target: IndexTarget{Column: "v"}},
		&CreateIndex{Keyspace: "shop", Table: "orders", Target: IndexTarget{Column: long}},
		&CreateType{Keyspace: "shop", Name: long, Fields: []Field{{Name: "a", Type: TypeInt}}},
		&DropType{Keyspace: "shop", Name: long},
	} {
		_, _, _, err := Apply(base, st, Env{Epoch: 10})
		if err == nil || len(err.Error()) > 1024 || !strings.HasPrefix(err.Error(), st.Kind()+" ") || !strings.Contains(err.Error(), "... (") {
			t.Errorf("%s: %.400v", st.Kind(), err)
		}
	}
}
