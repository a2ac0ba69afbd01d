package member

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/metalog/metalog/internal/boltcheck"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
)

// The verdicts of a DataDirReport.
const (
	// VerdictClean: every file is sound, and the store agrees with the
	// snapshot and log at its index.
	VerdictClean = "clean"
	// VerdictDamaged: a file is damaged, or the store disagrees with the
	// snapshot and log.
	VerdictDamaged = "damaged"
	// VerdictIncomplete: nothing is damaged, but the agreement could not
	// be checked (Agreement.Reason says why).
	VerdictIncomplete = "incomplete"
)

// DataDirReport is what CheckDataDir found in a stopped member's data dir.
type DataDirReport struct {
	Dir string `json:"dir"`
	// Files are the files read, each sound ("ok") or "damaged".
	Files []CheckedFile `json:"files"`
	// Findings are the damages, and the notes that are no damage.
	Findings  []Finding `json:"findings"`
	Agreement Agreement `json:"agreement"`
	Verdict   string    `json:"verdict"`
}

// CheckedFile is one file of a data dir as CheckDataDir found it.
type CheckedFile struct {
	// File is the file's path in the data dir.
	File string `json:"file"`
	// Status is "ok" or "damaged".
	Status string `json:"status"`
	// Summary says what a sound file holds.
	Summary string `json:"summary,omitempty"`
}

// Finding is a damage found in a file, or a note about it.
type Finding struct {
	File    string `json:"file"`
	Damaged bool   `json:"damaged"`
	// Kind is the kind of damage (boltcheck.Error.Kind; "agreement" for
	// a store that disagrees with the log); empty for a note.
	Kind   string `json:"kind,omitempty"`
	Where  string `json:"where,omitempty"`
	Detail string `json:"detail"`
}

// Agreement is the comparison of the schema the store holds at its index
// with the one the snapshot and log give at that index.
type Agreement struct {
	// Checked is false when the comparison could not be made; Reason
	// says why.
	Checked bool   `json:"checked"`
	Agree   bool   `json:"agree"`
	Reason  string `json:"reason,omitempty"`
	// StoreIndex, StoreEpoch and StoreDigest are what schema.db holds.
	StoreIndex  uint64 `json:"store_index"`
	StoreEpoch  uint64 `json:"store_epoch"`
	StoreDigest string `json:"store_digest,omitempty"`
	// SnapshotIndex is the snapshot the log was replayed from (0: the
	// log from its start); LogEpoch and LogDigest are what the replay
	// gave at StoreIndex.
	SnapshotIndex uint64 `json:"snapshot_index"`
	LogEpoch      uint64 `json:"log_epoch,omitempty"`
	LogDigest     string `json:"log_digest,omitempty"`
}

// kindAgreement is the Kind of the finding of a store that disagrees with
// the snapshot and log.
const kindAgreement = "agreement"

// ErrDataDirInUse is matched by the error of CheckDataDir when a running
// process (the member) holds raft.db or schema.db.
var ErrDataDirInUse = errors.New("the data dir is in use: stop the member first")

// CheckDataDir checks the files of a stopped member's data dir without
// changing any: raft.db, the write-ahead log and every snapshot file
// (raftlog.CheckLog), schema.db (metadata.CheckStore), the metadata in
// each snapshot, and that the store agrees with the newest snapshot at or
// below its index and the log after it. Damages are in the report; an
// error means the dir could not be checked at all (ErrDataDirInUse, no
// raft.db, a read of the file system failed).
func CheckDataDir(dir string) (*DataDirReport, error) {
	lc, err := raftlog.CheckLog(dir)
	if errors.Is(err, raftlog.ErrLocked) {
		return nil, fmt.Errorf("%w: %w", ErrDataDirInUse, err)
	}
	if err != nil {
		return nil, err
	}
	defer lc.Close()
	r := &DataDirReport{Dir: dir}
	for _, f := range lc.Files {
		r.addLogFile(f)
	}
	r.checkSnapshots(lc)
	store, ok, err := r.checkStore()
	if err != nil {
		return nil, err
	}
	switch {
	case !ok:
		r.Agreement.Reason = "schema.db could not be read"
	case !store.Sealed:
		r.Agreement.Reason = "schema.db was written before checksums and digests"
	default:
		r.agree(lc, store)
	}
	r.Verdict = VerdictClean
	if slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Damaged }) {
		r.Verdict = VerdictDamaged
	} else if !r.Agreement.Checked {
		r.Verdict = VerdictIncomplete
	}
	return r, nil
}

// rel is path in the data dir.
func (r *DataDirReport) rel(path string) string {
	if p, err := filepath.Rel(r.Dir, path); err == nil {
		return p
	}
	return path
}

// addFile adds a file, sound when d is nil, with its summary and note.
func (r *DataDirReport) addFile(path, summary string, d *boltcheck.Error, note string) {
	f := CheckedFile{File: r.rel(path), Status: "ok", Summary: summary}
	if d != nil {
		f.Status, f.Summary = "damaged", ""
		r.Findings = append(r.Findings, Finding{File: f.File, Damaged: true, Kind: d.Kind, Where: d.Where, Detail: d.Detail})
	}
	if note != "" {
		r.Findings = append(r.Findings, Finding{File: f.File, Detail: note})
	}
	if d != nil || summary != "" || note == "" {
		r.Files = append(r.Files, f)
	}
}

func (r *DataDirReport) addLogFile(f raftlog.CheckedFile) {
	r.addFile(f.Path, f.Summary, f.Damage, f.Note)
}

// checkSnapshots decodes the metadata of every sound snapshot file, adds
// what it holds to the file's summary, and drops the ones that do not
// decode from lc.Snapshots, so that Rebuild does not pick them.
func (r *DataDirReport) checkSnapshots(lc *raftlog.LogCheck) {
	var sound []raftlog.SnapshotFile
	for _, s := range lc.Snapshots {
		data, err := lc.ReadSnapshot(s)
		var sc metadata.SnapshotCheck
		if err == nil {
			sc, err = metadata.CheckSnapshot(s.Index, data)
		}
		i := slices.IndexFunc(r.Files, func(f CheckedFile) bool { return f.File == r.rel(s.Path) })
		if err != nil {
			r.Files[i].Status, r.Files[i].Summary = "damaged", ""
			r.Findings = append(r.Findings, Finding{File: r.Files[i].File, Damaged: true, Kind: metadata.DamageRecord, Detail: err.Error()})
			continue
		}
		r.Files[i].Summary += fmt.Sprintf("; epoch %d, digest %s, %d keyspaces, %d tables", sc.Epoch, shortDigest(sc.Digest), sc.Keyspaces, sc.Tables)
		sound = append(sound, s)
	}
	lc.Snapshots = sound
}

// checkStore checks schema.db; ok is false when it is missing or damaged
// (a finding).
func (r *DataDirReport) checkStore() (metadata.StoreCheck, bool, error) {
	path := filepath.Join(r.Dir, "schema.db")
	sc, err := metadata.CheckStore(r.Dir)
	var d *boltcheck.Error
	switch {
	case err == nil && !sc.Sealed:
		r.addFile(path, fmt.Sprintf("index %d, epoch %d", sc.Index, sc.Epoch), nil, "written before checksums: its values are not checked; the next start seals them")
	case err == nil:
		r.addFile(path, fmt.Sprintf("index %d, epoch %d, digest %s, %d keyspaces, %d tables, %d requests",
			sc.Index, sc.Epoch, shortDigest(sc.Digest), sc.Keyspaces, sc.Tables, sc.Requests), nil, "")
	case errors.Is(err, metadata.ErrStoreLocked):
		return sc, false, fmt.Errorf("%w: %w", ErrDataDirInUse, err)
	case errors.Is(err, os.ErrNotExist):
		r.addFile(path, "", nil, "missing: the next start rebuilds it from the snapshot and log")
	case errors.As(err, &d):
		r.addFile(path, "", d, "")
	default:
		return sc, false, err
	}
	return sc, err == nil, nil
}

// agree rebuilds the metadata at the store's index from the snapshot and
// log, in a temporary state machine, and compares it with the store's.
func (r *DataDirReport) agree(lc *raftlog.LogCheck, store metadata.StoreCheck) {
	a := &r.Agreement
	a.StoreIndex, a.StoreEpoch, a.StoreDigest = store.Index, store.Epoch, hex.EncodeToString(store.Digest[:])
	base, m, err := rebuildAt(lc, store.Index)
	a.SnapshotIndex = base
	if err != nil {
		a.Reason = err.Error()
		return
	}
	d := m.Schema.Digest()
	a.Checked, a.LogEpoch, a.LogDigest = true, m.Epoch, hex.EncodeToString(d[:])
	a.Agree = m.Epoch == store.Epoch && d == store.Digest
	if !a.Agree {
		r.Findings = append(r.Findings, Finding{File: r.rel(store.Path), Damaged: true, Kind: kindAgreement, Detail: fmt.Sprintf(
			"at index %d the store holds epoch %d, digest %s; the snapshot at %d and the log give epoch %d, digest %s",
			store.Index, store.Epoch, shortDigest(store.Digest), base, m.Epoch, shortDigest(d))})
	}
}

// rebuildAt replays the checked log to index into a state machine of its
// own, in a temporary dir, and returns the snapshot it started from and
// the metadata it reached.
func rebuildAt(lc *raftlog.LogCheck, index uint64) (uint64, *metadata.ClusterMetadata, error) {
	tmp, err := os.MkdirTemp("", "metalog-check-")
	if err != nil {
		return 0, nil, err
	}
	defer os.RemoveAll(tmp)
	sm, err := metadata.Open(metadata.Config{Dir: tmp})
	if err != nil {
		return 0, nil, err
	}
	defer sm.Close()
	app := &applier{sm: sm, fatal: func(error) {}}
	base, err := lc.Rebuild(app, app, index)
	if err == nil {
		err = app.failed()
	}
	if err != nil {
		return base, nil, err
	}
	return base, sm.Current(), nil
}

// shortDigest is the first 8 bytes of a digest, in hex.
func shortDigest(d [32]byte) string { return hex.EncodeToString(d[:8]) }
