package plan

import (
	"fmt"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// verifyEpoch is the epoch verify applies a plan at: any will do, as
// nothing the applier checks depends on it; the largest stays clear of the
// epochs of the schema's own tables.
const verifyEpoch = ^uint64(0)

// verify applies the plan's statements in order to from, as a server
// would, parsing each from its text: every one must parse as one
// statement, pass the admission rules of a new request and apply. A failure is a planner bug, reported as
// ErrPlanDoesNotApply with the statement and the applier's error.
func verify(from schema.Schema, p Plan) error {
	s := from
	for i, st := range p.Statements {
		parsed, err := cql.Parse(st.CQL)
		if err == nil && len(parsed) != 1 {
			err = fmt.Errorf("%d statements in one", len(parsed))
		}
		if err == nil {
			err = schema.Admit(parsed[0].Statement)
		}
		if err == nil {
			s, _, _, err = schema.Apply(s, parsed[0].Statement, schema.Env{Epoch: verifyEpoch, Seq: uint32(i), Rules: schema.CurrentRules})
		}
		if err != nil {
			return fmt.Errorf("%w: statement %d of %d, %s: %w", ErrPlanDoesNotApply, i+1, len(p.Statements), clip.Quote(st.CQL), err)
		}
	}
	return nil
}
