package member

import (
	"context"

	"github.com/metalog/metalog/metadata"
)

// Backup returns a backup of this member's state at a linearizable point
// (metadata.StateMachine.Backup's bytes) and the state it holds: the
// member confirms with the leader that it has applied everything
// committed, then encodes that immutable state while it applies on. A
// member still copying history from a peer answers Unavailable: another
// member has it all.
func (r *Reads) Backup(ctx context.Context) ([]byte, *metadata.ClusterMetadata, error) {
	state, err := r.read(ctx, 0, Linearizable)
	if err != nil {
		return nil, nil, err
	}
	data, err := r.machine.Backup(state)
	if err != nil {
		return nil, nil, historyError(err)
	}
	return data, state, nil
}
