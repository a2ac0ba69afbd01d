package member

import (
	"fmt"
	"os"
	"slices"

	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
)

// RestoreDataDir makes dir the data dir of member name of a new cluster
// founded by initial, from a backup (the bytes of metalog backup save):
// Start with the same name and initial cluster then bootstraps a cluster
// that holds the backup's schema, guardrails and request ids at its epoch.
// Every founding member is restored from the same backup; the cluster's id
// is made from the founding members and the backup, so the restored
// cluster never takes the one the backup came from for its own. dir must
// be new or empty of a member's files. It returns what the member will
// hold.
func RestoreDataDir(dir, name string, initial []InitialMember, data []byte) (*metadata.ClusterMetadata, error) {
	if !slices.ContainsFunc(initial, func(im InitialMember) bool { return im.Name == name }) {
		return nil, fmt.Errorf("restore: --name %s is not one of the initial cluster's members", name)
	}
	dd, err := raftlog.Inspect(dir)
	if err != nil {
		return nil, err
	}
	if dd.Exists {
		return nil, fmt.Errorf("restore: %s holds a member's raft log already: restore into a new data dir", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	return metadata.RestoreBackup(dir, data)
}
