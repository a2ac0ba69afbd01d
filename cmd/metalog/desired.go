package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// errNoDesired is a plan or apply given no desired schema.
var errNoDesired = errors.New("no desired schema: give -f desired.cql (several -f, a directory of .cql files, or - for standard input)")

// desiredFiles reads the desired schema of plan and apply: each -f in
// order, a file, "-" for standard input (once), or a directory, for its
// .cql files in name order (not those of its subdirectories). Every text
// must be UTF-8. The names are the paths as given, for the members'
// errors.
func desiredFiles(paths []string, stdin io.Reader) ([]*pb.DesiredFile, error) {
	if len(paths) == 0 {
		return nil, errNoDesired
	}
	var out []*pb.DesiredFile
	usedStdin := false
	for _, path := range paths {
		switch info, err := os.Stat(path); {
		case path == "-":
			if usedStdin {
				return nil, errors.New("-f -: standard input is given twice; give it once")
			}
			usedStdin = true
			b, err := io.ReadAll(stdin)
			if err != nil {
				return nil, fmt.Errorf("reading standard input: %w", err)
			}
			out = append(out, &pb.DesiredFile{Name: "standard input", Text: string(b)})
		case err != nil:
			return nil, err
		case info.IsDir():
			files, err := dirFiles(path)
			if err != nil {
				return nil, err
			}
			out = append(out, files...)
		default:
			f, err := readDesired(path)
			if err != nil {
				return nil, err
			}
			out = append(out, f)
		}
	}
	for _, f := range out {
		if err := checkUTF8(f.Name, f.Text); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// dirFiles reads the .cql files of directory dir in name order: those
// that are files, or links to files; subdirectories are not read. A
// directory without one is an error, as a plan of nothing would keep
// everything and say it matches.
func dirFiles(dir string) ([]*pb.DesiredFile, error) {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return nil, err
	}
	var out []*pb.DesiredFile
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if !strings.HasSuffix(e.Name(), ".cql") {
			continue
		}
		if info, err := os.Stat(path); err != nil || info.IsDir() {
			continue
		}
		f, err := readDesired(path)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-f %s: the directory has no .cql file; give a directory of schema files, or files", dir)
	}
	return out, nil
}

// readDesired reads one desired schema file.
func readDesired(path string) (*pb.DesiredFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return &pb.DesiredFile{Name: path, Text: string(b)}, nil
}
