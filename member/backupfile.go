package member

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/snapshot"
)

// ErrBadBackup is matched (errors.Is) by the error of VerifyBackup,
// CheckBackup, VerifyBackupFile and RestoreBackupFile for bytes that are
// not a whole, intact backup: damaged, truncated, of another format
// version, or with history records out of order. The message says what is
// wrong and where; snapshot.ErrCorrupt and snapshot.ErrChecksum match too
// where they apply. Take the backup again, or use another copy.
var ErrBadBackup = errors.New("member: backup does not check out")

// badBackupError is a verification failure: its message is err's, and it
// matches ErrBadBackup as well as what err matches.
type badBackupError struct{ err error }

func (e *badBackupError) Error() string        { return e.err.Error() }
func (e *badBackupError) Is(target error) bool { return target == ErrBadBackup }
func (e *badBackupError) Unwrap() error        { return e.err }

// BackupStatus is what a backup holds, as `metalog backup status` prints
// it (the JSON field names are those of its --json output).
type BackupStatus struct {
	// Epoch and Index are the epoch and raft log index the backup holds.
	Epoch     uint64 `json:"epoch"`
	Index     uint64 `json:"index"`
	Keyspaces int    `json:"keyspaces"`
	// Tables counts the tables; Views counts the materialized views,
	// which Tables leaves out.
	Tables  int `json:"tables"`
	Views   int `json:"views"`
	Types   int `json:"types"`
	Indexes int `json:"indexes"`
	// Functions counts the functions and aggregates.
	Functions int `json:"functions"`
	// Requests counts the remembered request ids.
	Requests int `json:"requests"`
	// Guardrails is "set" when the backup holds guardrail settings, or
	// "defaults".
	Guardrails string `json:"guardrails"`
	// History is how many history records it holds, from HistoryFrom on
	// (up to Epoch).
	History     int    `json:"history_records"`
	HistoryFrom uint64 `json:"history_from_epoch,omitempty"`
	// Bytes is the backup's size.
	Bytes int `json:"bytes"`
	// ChecksumOK is true: a backup whose checksum fails is an error.
	ChecksumOK bool `json:"checksum_ok"`
	// Digest is the schema's, hex encoded, as GetSchema and cluster check
	// show it: compare it with the cluster's at Epoch.
	Digest string `json:"digest"`
}

// VerifyBackup checks a backup (the bytes of client.SaveBackup, of
// `metalog backup save`, or of GET /v1/backup: a record stream, the
// format of members' snapshots before store snapshots) offline: its
// checksum, every object, the schema digest and the
// order of its history records. It returns what the backup holds, or an
// error matching ErrBadBackup. It reads only data, which it does not
// retain.
func VerifyBackup(data []byte) (*BackupStatus, error) {
	c, err := snapshot.Decode(data)
	if err != nil {
		return nil, &badBackupError{err}
	}
	st := &BackupStatus{Epoch: c.Epoch, Index: c.Index, Keyspaces: c.Schema.KeyspaceCount(), Tables: c.Schema.TableCount(),
		Views: c.Schema.ViewCount(), Requests: len(c.Requests), Guardrails: "defaults", Bytes: len(data), ChecksumOK: true}
	d := c.Schema.Digest()
	st.Digest = hex.EncodeToString(d[:])
	for _, k := range c.Schema.Keyspaces() {
		st.Types += len(k.UserTypes())
		st.Indexes += len(k.Indexes())
		st.Functions += k.FunctionCount()
	}
	for _, s := range c.Sections {
		switch s.Tag {
		case snapshot.SectionGuardrails:
			st.Guardrails = "set"
		case snapshot.SectionHistory:
			if st.History, st.HistoryFrom, err = metadata.BackupHistory(s.Data, c.Epoch); err != nil {
				return nil, &badBackupError{err}
			}
		}
	}
	return st, nil
}

// CheckBackup is VerifyBackup returning only the epoch and raft log index
// the backup holds: the verify function client.SaveBackupFile takes, which
// compares them with what the member announced.
func CheckBackup(data []byte) (epoch, index uint64, err error) {
	st, err := VerifyBackup(data)
	if err != nil {
		return 0, 0, err
	}
	return st.Epoch, st.Index, nil
}

// VerifyBackupFile is VerifyBackup of the file at path; its errors name
// the file.
func VerifyBackupFile(path string) (*BackupStatus, error) {
	_, st, err := readBackupFile(path)
	return st, err
}

// readBackupFile reads the backup file at path and verifies it
// (VerifyBackup); its errors name the file.
func readBackupFile(path string) ([]byte, *BackupStatus, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := VerifyBackup(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, st, nil
}

// RestoreBackupFile makes dir the data dir of member name of a new cluster
// founded by initial, from the backup file at path, as RestoreDataDir
// does, once the whole backup has checked out (VerifyBackup): a damaged
// backup leaves dir as it was. Restore every founding member from the
// same backup, then Start each with the same name, data dir and initial
// cluster. It returns what the member will hold; its errors name the file.
func RestoreBackupFile(path, dir, name string, initial []InitialMember) (*BackupStatus, error) {
	data, st, err := readBackupFile(path)
	if err != nil {
		return nil, err
	}
	if _, err := RestoreDataDir(dir, name, initial, data); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}
