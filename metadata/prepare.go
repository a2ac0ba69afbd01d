package metadata

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/metalog/metalog/schema/cql"
)

// Prepared is a DDL command executed ahead of its apply, on the member
// that proposes it: checked as Precheck checks it, and executed as Apply
// executes it, on the state it was checked on. When the command then
// applies on that very state (nothing applied in between: the common
// case with one writer), the state machine takes the prepared result
// instead of executing the command a second time (Expected). The result
// is the same either way: Apply is deterministic, and its inputs (the
// state and the command's bytes) are the same.
type Prepared struct {
	base *ClusterMetadata // the state it was executed on
	id   string           // the command's request id
	data []byte           // the command as proposed (Command.Marshal)
	next *ClusterMetadata
	eff  Effects
	out  Outcome
}

// Prepare checks cmd, whose statements the caller parsed from cmd.Text,
// as Precheck does and returns the same refusal; when it would apply, it
// returns the command executed on m, to be proposed as data (cmd
// marshaled, with its request id set) and handed to Expected.Add. The
// outcome is Apply's, warnings included.
func (m *ClusterMetadata) Prepare(cmd Command, stmts []cql.Parsed, data []byte) (*Prepared, error) {
	next, eff, out, err := m.dryRun(cmd, stmts, modePrepare)
	if err != nil {
		return nil, err
	}
	return &Prepared{base: m, id: cmd.RequestID, data: data, next: next, eff: eff, out: out}, nil
}

// at is the prepared result applied at log index: what Apply returns for
// the command at index on p.base. It may be taken once.
func (p *Prepared) at(index uint64) (*ClusterMetadata, Effects, Outcome) {
	p.next.Index = index
	for _, r := range p.eff.Records {
		r.Index = index
	}
	return p.next, p.eff, p.out
}

// Expected holds the commands a member prepared and proposed, by request
// id, until they apply (the state machine takes them: Config.Expected)
// or their proposal ends (Remove). Its methods are safe for concurrent
// use; a nil *Expected expects nothing.
type Expected struct {
	mu   sync.Mutex
	byID map[string]*Prepared
	// used and executed count the DDL commands applied with a prepared
	// result and executed again (none prepared, or not for that state).
	used, executed atomic.Uint64
}

// Add expects p's command to apply.
func (e *Expected) Add(p *Prepared) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.byID == nil {
		e.byID = make(map[string]*Prepared)
	}
	e.byID[p.id] = p
}

// Remove forgets p once its proposal has ended, applied or not.
func (e *Expected) Remove(p *Prepared) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.byID[p.id] == p {
		delete(e.byID, p.id)
	}
}

// Counts returns how many DDL commands applied with a prepared result,
// and how many were executed on apply.
func (e *Expected) Counts() (used, executed uint64) {
	return e.used.Load(), e.executed.Load()
}

// take returns, and forgets, the prepared result of the command data
// (request id id) when it was prepared on cur.
func (e *Expected) take(id string, cur *ClusterMetadata, data []byte) *Prepared {
	if e == nil || id == "" {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.byID[id]
	if p == nil || p.base != cur || !bytes.Equal(p.data, data) {
		return nil
	}
	delete(e.byID, id)
	return p
}

// execute is cur.Apply(cmd, index) for the entry data: the prepared
// result when there is one for cur, else the command executed.
func (e *Expected) execute(cur *ClusterMetadata, cmd Command, index uint64, data []byte) (*ClusterMetadata, Effects, Outcome, error) {
	if p := e.take(cmd.RequestID, cur, data); p != nil {
		e.used.Add(1)
		next, eff, out := p.at(index)
		return next, eff, out, nil
	}
	if e != nil && cmd.Kind == KindDDL {
		e.executed.Add(1)
	}
	return cur.Apply(cmd, index)
}
