package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// planFileFormat and planFileVersion identify a plan file; apply refuses
// any other, so that a file of another tool, or of a later format it does
// not know, is never applied as something else.
const (
	planFileFormat  = "metalog-plan"
	planFileVersion = 1
)

// planFile is what "plan -o" writes and "apply PLANFILE" applies: the
// reviewed statements with the epoch and digests they were planned at,
// and the options that made them (for reviewers: apply uses none).
type planFile struct {
	// Format is planFileFormat and Version planFileVersion.
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Epoch is the epoch the plan was made at: it applies only at it.
	Epoch uint64 `json:"epoch"`
	// BaseDigest is the digest of the schema at Epoch (hex), and Digest
	// that of the schema the plan makes: apply checks, before it applies,
	// that the cluster's schema at Epoch makes Digest.
	BaseDigest string `json:"base_digest"`
	Digest     string `json:"digest"`
	// Statements are the plan, one CQL statement each, without ';'.
	Statements  []string `json:"statements"`
	Warnings    []string `json:"warnings"`
	Notes       []string `json:"notes"`
	Destructive bool     `json:"destructive"`
	// Options are the options of the plan command.
	Options planFileOptions `json:"options"`
}

// planFileOptions are the plan command's options a plan file records.
type planFileOptions struct {
	Files         []string `json:"files"`
	Keyspaces     []string `json:"keyspaces"`
	Prune         bool     `json:"prune"`
	DropColumns   bool     `json:"drop_columns"`
	AllowRecreate bool     `json:"allow_recreate"`
}

// newPlanFile is the plan file of plan p, made for request req.
func newPlanFile(req *pb.PlanRequest, p *pb.PlanResponse) *planFile {
	f := &planFile{Format: planFileFormat, Version: planFileVersion, Epoch: p.Epoch, BaseDigest: p.BaseDigest, Digest: p.Digest,
		Statements: nonNil(p.Statements), Warnings: nonNil(p.Warnings), Notes: nonNil(p.Notes), Destructive: p.Destructive,
		Options: planFileOptions{Keyspaces: nonNil(req.Keyspaces), Prune: req.Prune, DropColumns: req.DropColumns, AllowRecreate: req.AllowRecreate}}
	f.Options.Files = []string{}
	for _, d := range req.DesiredFiles {
		f.Options.Files = append(f.Options.Files, d.Name)
	}
	return f
}

// nonNil is s, or an empty slice for nil, so that JSON shows [] rather
// than null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// response is the plan of f as the Plan RPC answers it, for printing.
func (f *planFile) response() *pb.PlanResponse {
	return &pb.PlanResponse{Epoch: f.Epoch, Statements: f.Statements, Warnings: f.Warnings, Notes: f.Notes,
		Destructive: f.Destructive, Digest: f.Digest, BaseDigest: f.BaseDigest}
}

// write writes f to path whole or not at all: into a temporary file of
// the same directory, synced, then renamed over path.
func (f *planFile) write(path string) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".plan-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// errNotPlanFile is a file apply cannot take as a plan file.
var errNotPlanFile = errors.New("not a plan file of this metalog")

// readPlanFile reads a plan file "plan -o" wrote, refusing anything else.
func readPlanFile(path string) (*planFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f planFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w: %v (write one with metalog plan -o %s)", path, errNotPlanFile, err, path)
	}
	switch {
	case f.Format != planFileFormat:
		return nil, fmt.Errorf("%s: %w: its format is %q, not %q (write one with metalog plan -o %s)", path, errNotPlanFile, f.Format, planFileFormat, path)
	case f.Version != planFileVersion:
		return nil, fmt.Errorf("%s: %w: it is version %d of the plan format, and this metalog reads version %d: plan again with this metalog", path, errNotPlanFile, f.Version, planFileVersion)
	case len(f.Statements) > 0 && (f.Digest == "" || f.BaseDigest == ""):
		return nil, fmt.Errorf("%s: %w: it has statements but no digest or base_digest to check them against", path, errNotPlanFile)
	}
	return &f, nil
}
