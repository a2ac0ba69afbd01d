package server

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/metalog/metalog/access"
)

var (
	// errAuthFile marks a malformed auth token file.
	errAuthFile = errors.New("auth_token_file")
)

// tokenEntry is one line of the token file.
type tokenEntry struct {
	name   string
	grants access.Grants
}

// parseTokenFile reads "name sha256hex role,role" lines of file; blank
// lines and lines starting with # are skipped. An error names the file
// and line (file:line) and why the line is refused: the whole file is,
// so that a reload keeps the tokens it had.
func parseTokenFile(file string, data []byte) (map[[sha256.Size]byte]tokenEntry, error) {
	out := map[[sha256.Size]byte]tokenEntry{}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Fields(text)
		if len(f) != 3 {
			return nil, fmt.Errorf("%w %s:%d: want \"name sha256hex role,role\", got %d fields", errAuthFile, file, line, len(f))
		}
		if err := access.CheckName(f[0]); err != nil {
			return nil, fmt.Errorf("%w %s:%d: token name: %v (`metalog token new --name` checks it)", errAuthFile, file, line, err)
		}
		raw, err := hex.DecodeString(f[1])
		if err != nil || len(raw) != sha256.Size {
			return nil, fmt.Errorf("%w %s:%d (%s): the hash must be 64 hex digits (`metalog token hash` prints it)", errAuthFile, file, line, f[0])
		}
		grants, err := access.ParseGrants(strings.Split(f[2], ","))
		if err != nil {
			return nil, fmt.Errorf("%w %s:%d (%s): %v", errAuthFile, file, line, f[0], err)
		}
		var key [sha256.Size]byte
		copy(key[:], raw)
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("%w %s:%d (%s): the same token hash is listed twice", errAuthFile, file, line, f[0])
		}
		out[key] = tokenEntry{name: f[0], grants: grants}
	}
	return out, sc.Err()
}

// tokenStore is the token file, reloaded on demand and when it changes
// (checked at most once per reloadCheckInterval).
type tokenStore struct {
	file    string
	onError func(error)

	mu        sync.Mutex // guards the fields below
	tokens    map[[sha256.Size]byte]tokenEntry
	stamp     []fileStamp
	lastCheck time.Time
}

func newTokenStore(file string) (*tokenStore, error) {
	ts := &tokenStore{file: file}
	if err := ts.Reload(); err != nil {
		return nil, err
	}
	return ts, nil
}

// Reload reads the file again; on error the previous tokens stay.
func (ts *tokenStore) Reload() error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.reloadLocked()
}

func (ts *tokenStore) reloadLocked() error {
	stamp := stampsOf([]string{ts.file})
	data, err := readMaterial("auth_token_file", ts.file, tokenFile)
	if err != nil {
		return err
	}
	tokens, err := parseTokenFile(ts.file, data)
	if err != nil {
		return err
	}
	ts.tokens, ts.stamp, ts.lastCheck = tokens, stamp, time.Now()
	return nil
}

// lookup returns the entry of a token.
func (ts *tokenStore) lookup(token string) (tokenEntry, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if now := time.Now(); now.Sub(ts.lastCheck) >= reloadCheckInterval {
		ts.lastCheck = now
		if st := stampsOf([]string{ts.file}); !equalStamps(st, ts.stamp) {
			if err := ts.reloadLocked(); err != nil {
				ts.stamp = st
				if ts.onError != nil {
					ts.onError(err)
				}
			}
		}
	}
	// A map lookup by hash: the hash of a guess reveals nothing about the
	// stored ones, so no constant-time compare is needed here.
	e, ok := ts.tokens[sha256.Sum256([]byte(token))]
	return e, ok
}

// Lookup implements api.Tokens.
func (ts *tokenStore) Lookup(token string) (string, access.Grants, bool) {
	e, ok := ts.lookup(token)
	return e.name, e.grants, ok
}
