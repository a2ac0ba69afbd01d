package server

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"time"
)

// Errors of the security material a member reads (certificates, keys,
// CAs, the token file), matched with errors.Is.
var (
	// errFileMode marks a key, token, certificate or CA file whose mode
	// lets other users read or change it.
	errFileMode = errors.New("refused a file open to other users")
	// errCertExpired marks a certificate past its NotAfter.
	errCertExpired = errors.New("certificate expired")
	// errCertNotYetValid marks a certificate before its NotBefore.
	errCertNotYetValid = errors.New("certificate not yet valid")
)

// fileKind is a kind of file the member reads its security material from,
// with the permission bits it refuses on it. The rule is ssh's for private
// keys: a secret (a private key, the token file, whose hashes let no one
// sign in but whose lines grant roles) must not be open to group or
// others at all, so that no other user can read a key or add a token; a
// public file (a certificate, a CA bundle) may be read by anyone, but must
// not be writable by group or others, who could otherwise make the member
// trust a CA of theirs.
type fileKind struct {
	name    string      // for messages: "private key", "token file", ...
	refused fs.FileMode // permission bits refused
	want    string      // the mode to suggest
}

// The file kinds.
var (
	secretKey   = fileKind{name: "private key", refused: 0o077, want: "600"}
	tokenFile   = fileKind{name: "token file", refused: 0o077, want: "600"}
	certificate = fileKind{name: "certificate", refused: 0o022, want: "644"}
	caBundle    = fileKind{name: "CA file", refused: 0o022, want: "644"}
)

// readMaterial reads the file that setting (the config key, such as
// client_key_file) names, after checking its mode against kind on the
// open file, so that the bytes read are those of the file checked. On
// Windows, where the mode bits say nothing of who may read a file, the
// mode is not checked.
func readMaterial(setting, path string, kind fileKind) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", setting, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", setting, err)
	}
	if err := checkMode(setting, path, fi.Mode(), kind); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", setting, path, err)
	}
	return data, nil
}

// checkMode refuses mode when it has any of kind's refused bits, naming
// the file, its mode, who may do what, and the fix.
func checkMode(setting, path string, mode fs.FileMode, kind fileKind) error {
	bad := mode.Perm() & kind.refused
	if bad == 0 || runtime.GOOS == "windows" {
		return nil
	}
	var who []string
	if bad&0o070 != 0 {
		who = append(who, "its group")
	}
	if bad&0o007 != 0 {
		who = append(who, "all other users")
	}
	var can []string
	for _, p := range []struct {
		bits fs.FileMode
		verb string
	}{{0o044, "read"}, {0o022, "write"}, {0o011, "execute"}} {
		if bad&p.bits != 0 {
			can = append(can, p.verb)
		}
	}
	return fmt.Errorf("%w: %s %s has mode %04o: %s may %s it, and a %s must be %s; nothing was loaded from it: check that its contents are yours, then chmod %s %s",
		errFileMode, setting, path, mode.Perm(), strings.Join(who, " and "), strings.Join(can, " and "),
		kind.name, kind.rule(), kind.want, path)
}

// rule says in words which bits kind refuses.
func (k fileKind) rule() string {
	if k.refused == 0o077 {
		return "readable and writable by its owner only (no permission for group or others, as ssh requires of a private key)"
	}
	return "writable by its owner only (anyone may read it)"
}

// checkValidity refuses a certificate that is not valid at now: an expired
// one, and one not valid yet (a clock behind the issuer's, or a
// certificate issued for later). The error names the file, the
// certificate's subject and its validity period.
func checkValidity(setting, path string, leaf *x509.Certificate, now time.Time) error {
	period := fmt.Sprintf("valid from %s to %s", leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339))
	switch {
	case now.After(leaf.NotAfter):
		return fmt.Errorf("%w: %s %s (subject %q) is %s, and it is now %s: install a renewed certificate",
			errCertExpired, setting, path, leaf.Subject.String(), period, now.UTC().Format(time.RFC3339))
	case now.Before(leaf.NotBefore):
		return fmt.Errorf("%w: %s %s (subject %q) is %s, and it is now %s: check this machine's clock, or wait until it is valid",
			errCertNotYetValid, setting, path, leaf.Subject.String(), period, now.UTC().Format(time.RFC3339))
	}
	return nil
}
