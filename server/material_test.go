package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/metalog/metalog/internal/testkit"
)

// TestReadMaterialRefusesFilesOpenToOthers: a private key or a token file
// with any permission for group or others is refused, a certificate or
// CA file writable by them is refused and one readable by all is not;
// each refusal names the setting, the path and the mode.
func TestReadMaterialRefusesFilesOpenToOthers(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		kind fileKind
		mode fs.FileMode
		want string // "" for accepted
	}{
		{secretKey, 0o600, ""},
		{secretKey, 0o400, ""},
		{secretKey, 0o640, "its group may read it"},
		{secretKey, 0o644, "its group and all other users may read it"},
		{secretKey, 0o604, "all other users may read it"},
		{tokenFile, 0o600, ""},
		{tokenFile, 0o666, "its group and all other users may read and write it"},
		{tokenFile, 0o620, "its group may write it"},
		{caBundle, 0o644, ""},
		{caBundle, 0o444, ""},
		{caBundle, 0o664, "its group may write it"},
		{caBundle, 0o666, "its group and all other users may write it"},
		{certificate, 0o644, ""},
		{certificate, 0o646, "all other users may write it"},
	} {
		t.Run(fmt.Sprintf("%s %04o", tc.kind.name, tc.mode), func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.kind.name, " ", "_")+fmt.Sprintf("%o", tc.mode))
			testkit.WriteFile(t, path, []byte("content"))
			if err := os.Chmod(path, tc.mode); err != nil {
				t.Fatal(err)
			}
			data, err := readMaterial("some_file", path, tc.kind)
			if tc.want == "" {
				if err != nil || string(data) != "content" {
					t.Fatalf("mode %04o refused: %q, %v", tc.mode, data, err)
				}
				return
			}
			wantMsg := fmt.Sprintf("some_file %s has mode %04o: %s", path, tc.mode, tc.want)
			if !errors.Is(err, errFileMode) || !strings.Contains(err.Error(), wantMsg) || !strings.Contains(err.Error(), "chmod "+tc.kind.want+" "+path) {
				t.Fatalf("mode %04o: %v, want an errFileMode saying %q and the chmod", tc.mode, err, wantMsg)
			}
		})
	}
}

// TestCertReloaderRefusesKeysOpenToOthers: a key file readable by others
// is refused at start with its path and mode; on a reload (the file
// changed) the previous pair stays and the error is reported; once the
// mode is fixed the new pair is taken without another change.
func TestCertReloaderRefusesKeysOpenToOthers(t *testing.T) {
	ca := testkit.NewCA(t, "ca")
	certFile, keyFile := ca.IssueFiles(t, "srv", "first")
	os.Chmod(keyFile, 0o644)
	if _, err := newCertReloader("client", certFile, keyFile, ""); !errors.Is(err, errFileMode) || !strings.Contains(err.Error(), "client_key_file "+keyFile+" has mode 0644") {
		t.Fatalf("start with a key of mode 0644: %v", err)
	}
	os.Chmod(keyFile, 0o600)
	r, err := newCertReloader("client", certFile, keyFile, "")
	if err != nil {
		t.Fatal(err)
	}
	var reported []error
	r.onError = func(err error) { reported = append(reported, err) }

	ca.IssueFiles(t, "srv", "second")
	touch(t, certFile, keyFile)
	os.Chmod(keyFile, 0o640)
	look := func() string {
		r.mu.Lock()
		r.lastCheck = time.Time{}
		r.mu.Unlock()
		cert, _ := r.current()
		return cert.Leaf.Subject.CommonName
	}
	if cn := look(); cn != "first" || len(reported) != 1 || !errors.Is(reported[0], errFileMode) {
		t.Fatalf("after a change to a key of mode 0640: %q, reported %v", cn, reported)
	}
	if cn := look(); cn != "first" || len(reported) != 1 {
		t.Fatalf("a second look at the same refused files: %q, reported %d times", cn, len(reported))
	}
	os.Chmod(keyFile, 0o600)
	if cn := look(); cn != "second" || len(reported) != 1 {
		t.Fatalf("after chmod 600: %q, reported %v", cn, reported)
	}
}

// TestCertReloaderRefusesCertificatesOutsideTheirValidity: an expired
// certificate is refused at start and on reload with the file and its
// validity period, and the previous one stays; one not valid yet is
// refused too, reported once, and taken at the first look once it is
// valid.
func TestCertReloaderRefusesCertificatesOutsideTheirValidity(t *testing.T) {
	ca := testkit.NewCA(t, "ca")
	past := time.Now().Add(-48 * time.Hour)
	certFile, keyFile := ca.IssueFiles(t, "srv", "expired", testkit.Valid(past, past.Add(24*time.Hour)))
	_, err := newCertReloader("peer", certFile, keyFile, "")
	period := "valid from " + past.UTC().Format(time.RFC3339) + " to " + past.Add(24*time.Hour).UTC().Format(time.RFC3339)
	if !errors.Is(err, errCertExpired) || !strings.Contains(err.Error(), "peer_cert_file "+certFile) || !strings.Contains(err.Error(), period) {
		t.Fatalf("start with an expired certificate: %v, want errCertExpired naming the file and %q", err, period)
	}

	ca.IssueFiles(t, "srv", "first")
	r, err := newCertReloader("peer", certFile, keyFile, "")
	if err != nil {
		t.Fatal(err)
	}
	ca.IssueFiles(t, "srv", "expired", testkit.Valid(past, past.Add(24*time.Hour)))
	if err := r.Reload(); !errors.Is(err, errCertExpired) || !strings.Contains(err.Error(), period) {
		t.Fatalf("reload of an expired certificate: %v", err)
	}
	if cert, _ := r.current(); cert.Leaf.Subject.CommonName != "first" {
		t.Fatalf("after the refused reload: %q, want first still", cert.Leaf.Subject.CommonName)
	}

	// Not valid yet: refused, reported once, taken once valid.
	clock := time.Now()
	r.now = func() time.Time { return clock }
	var reported []error
	r.onError = func(err error) { reported = append(reported, err) }
	later := clock.Add(time.Hour)
	ca.IssueFiles(t, "srv", "later", testkit.Valid(later, later.Add(time.Hour)))
	touch(t, certFile, keyFile)
	look := func() string {
		r.mu.Lock()
		r.lastCheck = time.Time{}
		r.mu.Unlock()
		cert, _ := r.current()
		return cert.Leaf.Subject.CommonName
	}
	for range 2 {
		if cn := look(); cn != "first" || len(reported) != 1 || !errors.Is(reported[0], errCertNotYetValid) {
			t.Fatalf("a certificate valid in an hour: %q, reported %v", cn, reported)
		}
	}
	clock = later.Add(time.Minute)
	if cn := look(); cn != "later" || len(reported) != 1 {
		t.Fatalf("once valid: %q, reported %v", cn, reported)
	}
}

// touches counts touch's calls, so that each sets a later time.
var touches int

// touch sets the files' modification time later than any before, so that
// a rewrite within one tick of the filesystem's clock shows as a change.
func touch(t *testing.T, files ...string) {
	t.Helper()
	touches++
	at := time.Now().Add(time.Duration(touches) * time.Minute)
	for _, f := range files {
		if err := os.Chtimes(f, at, at); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCipherSuitesAreGRPCs: the suites every listener offers are the TLS
// 1.2 suites gRPC keeps by default: ECDHE with an AEAD, no CBC, no SHA-1
// MAC, none of Go's insecure list.
func TestCipherSuitesAreGRPCs(t *testing.T) {
	ours := map[uint16]bool{}
	for _, id := range cipherSuites() {
		ours[id] = true
	}
	insecure := map[uint16]bool{}
	for _, s := range tls.InsecureCipherSuites() {
		insecure[s.ID] = true
	}
	for _, s := range tls.CipherSuites() {
		tls12 := false
		for _, v := range s.SupportedVersions {
			tls12 = tls12 || v == tls.VersionTLS12
		}
		if !tls12 {
			continue
		}
		aead := strings.HasPrefix(s.Name, "TLS_ECDHE_") && (strings.Contains(s.Name, "_GCM_") || strings.Contains(s.Name, "CHACHA20"))
		if ours[s.ID] != aead {
			t.Errorf("%s: offered %v, want %v", s.Name, ours[s.ID], aead)
		}
	}
	for id := range ours {
		name := tls.CipherSuiteName(id)
		if insecure[id] || strings.Contains(name, "CBC") || strings.HasSuffix(name, "_SHA") {
			t.Errorf("%s offered", name)
		}
	}
}

// TestPprofOffLoopbackWithoutAuthIsNamed: the refusal of enable_pprof off
// loopback without authentication is errPprofExposed, the same config
// with authentication or on loopback is not refused.
func TestPprofOffLoopbackWithoutAuthIsNamed(t *testing.T) {
	c := DefaultConfig()
	c.EnablePprof, c.Insecure, c.HTTPAddr = true, true, "0.0.0.0:7080"
	if err := c.validate(); !errors.Is(err, errPprofExposed) {
		t.Fatalf("enable_pprof on 0.0.0.0 without auth: %v, want errPprofExposed", err)
	}
	c.AuthTokenFile = "tokens"
	if err := c.validatePprof(); err != nil {
		t.Fatalf("with auth: %v", err)
	}
	c.AuthTokenFile, c.HTTPAddr = "", "127.0.0.1:7080"
	if err := c.validatePprof(); err != nil {
		t.Fatalf("on loopback: %v", err)
	}
}
