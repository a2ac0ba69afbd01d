package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// TestLoad checks that Load applies a file's statements in order (USE,
// ALTER and DROP included) and that its errors name the statement, its
// line and why, matching the underlying error.
func TestLoad(t *testing.T) {
	s := mustLoad(t, `-- the desired schema
CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
USE ks;
CREATE TABLE t (id int PRIMARY KEY, v text, w int);
ALTER TABLE t DROP w;
CREATE TABLE gone (id int PRIMARY KEY);
DROP TABLE gone;`)
	tbl, ok := s.Table("ks", "t")
	if !ok || len(tbl.Columns) != 2 || len(tbl.DroppedColumns) != 1 || s.TableCount() != 1 {
		t.Fatalf("loaded:\n%s", schema.DescribeSchema(s))
	}

	_, err := Load(ksHead + "CREATE TABLE ks.t (id int PRIMARY KEY, v text);\nCREATE TABLE ks.t (id int PRIMARY KEY)")
	var le *LoadError
	if !errors.As(err, &le) || le.Statement != 3 || le.Line != 3 || !errors.Is(err, schema.ErrAlreadyExists) ||
		err.Error() != "plan: desired schema: statement 3 (line 3:1): CREATE TABLE ks.t: table already exists" {
		t.Errorf("apply error: %#v %v", le, err)
	}
	_, err = Load(ksHead + "CREATE TABLE ks.t (id int PRIMRY KEY)")
	var se *cql.SyntaxError
	if !errors.As(err, &le) || le.Statement != 0 || le.Line != 2 || !errors.As(err, &se) || !strings.HasPrefix(err.Error(), "plan: desired schema: line 2:") {
		t.Errorf("syntax error: %#v %v", le, err)
	}
	_, err = Load(ksHead + "CREATE TABLE ks.t (id int PRIMARY KEY, \"a\nb\" text)")
	if !errors.As(err, &le) || le.Statement != 2 || !errors.Is(err, schema.ErrInvalid) {
		t.Errorf("admission error: %v", err)
	}
	if s, err := Load(""); err != nil || s.KeyspaceCount() != 0 {
		t.Errorf("empty text: %v", err)
	}
}
