package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/metalog/metalog/api"
	"github.com/metalog/metalog/internal/certchain"
	"github.com/metalog/metalog/member"
)

// reloadCheckInterval bounds how often a handshake looks at the files'
// modification times: one stat per file at most this often.
const reloadCheckInterval = time.Second

// errNoCertificate marks a PEM file without a certificate.
var errNoCertificate = errors.New("no certificate found")

// certReloader holds a key pair and an optional CA pool read from PEM files,
// and reloads them on demand (SIGHUP) or when a file's modification time or
// size changes (checked at handshakes, at most once per reloadCheckInterval).
// A reload that fails keeps the previous, working material and is logged by
// the caller.
type certReloader struct {
	what                      string // "client" or "peer", for errors
	certFile, keyFile, caFile string
	now                       func() time.Time // the clock certificates are checked against; nil: time.Now (tests set it)

	mu        sync.Mutex // guards the fields below
	cert      *tls.Certificate
	pool      *x509.CertPool
	stamps    []fileStamp
	failed    []fileStamp // the files' stamps when a change last failed to load, so it is reported once
	lastCheck time.Time
	onError   func(error) // called (with mu held) when a change fails to load
}

// fileStamp identifies a version of a file cheaply. The mode is part of
// it, so that a file refused for its mode is read again once its mode is
// fixed.
type fileStamp struct {
	mod  time.Time
	size int64
	mode os.FileMode
}

func newCertReloader(what, certFile, keyFile, caFile string) (*certReloader, error) {
	r := &certReloader{what: what, certFile: certFile, keyFile: keyFile, caFile: caFile}
	if err := r.Reload(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *certReloader) files() []string {
	out := []string{r.certFile, r.keyFile}
	if r.caFile != "" {
		out = append(out, r.caFile)
	}
	return out
}

func stampsOf(files []string) []fileStamp {
	out := make([]fileStamp, len(files))
	for i, f := range files {
		if fi, err := os.Stat(f); err == nil {
			out[i] = fileStamp{mod: fi.ModTime(), size: fi.Size(), mode: fi.Mode()}
		}
	}
	return out
}

// Reload reads the files again. On error the previous material stays.
func (r *certReloader) Reload() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reloadLocked()
}

// reloadLocked reads the key pair and the CA bundle, and takes them only
// when every file passes: its mode (readMaterial), and a certificate
// valid now (checkValidity); otherwise the previous material stays.
func (r *certReloader) reloadLocked() error {
	stamps := stampsOf(r.files())
	cert, err := r.loadPair()
	if err != nil {
		return err
	}
	var pool *x509.CertPool
	if r.caFile != "" {
		if pool, err = loadPool(r.what+"_ca_file", r.caFile); err != nil {
			return fmt.Errorf("%s tls: %w", r.what, err)
		}
	}
	r.cert, r.pool, r.stamps, r.failed = cert, pool, stamps, nil
	r.lastCheck = time.Now()
	return nil
}

// loadPair reads the certificate and its key, and refuses a certificate
// that is not valid now.
func (r *certReloader) loadPair() (*tls.Certificate, error) {
	certPEM, err := readMaterial(r.what+"_cert_file", r.certFile, certificate)
	if err != nil {
		return nil, fmt.Errorf("%s tls: %w", r.what, err)
	}
	keyPEM, err := readMaterial(r.what+"_key_file", r.keyFile, secretKey)
	if err != nil {
		return nil, fmt.Errorf("%s tls: %w", r.what, err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%s tls: loading %s and %s: %w", r.what, r.certFile, r.keyFile, err)
	}
	now := time.Now
	if r.now != nil {
		now = r.now
	}
	if err := checkValidity(r.what+"_cert_file", r.certFile, cert.Leaf, now()); err != nil {
		return nil, fmt.Errorf("%s tls: %w", r.what, err)
	}
	return &cert, nil
}

// loadPool reads a PEM bundle of CA certificates from the file setting
// names.
func loadPool(setting, file string) (*x509.CertPool, error) {
	pem, err := readMaterial(setting, file, caBundle)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s %s: %w", setting, file, errNoCertificate)
	}
	return pool, nil
}

// current returns the key pair and CA pool, reloading first if a file
// changed since the last look.
func (r *certReloader) current() (*tls.Certificate, *x509.CertPool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := time.Now(); now.Sub(r.lastCheck) >= reloadCheckInterval {
		r.lastCheck = now
		if stamps := stampsOf(r.files()); !equalStamps(stamps, r.stamps) {
			if err := r.reloadLocked(); err != nil {
				r.failedLocked(stamps, err)
			}
		}
	}
	return r.cert, r.pool
}

// failedLocked records that the files at stamps failed to load with err,
// and reports err once per version of the files. A broken file is not
// read again until it changes; a certificate not valid yet is read again
// at the next look (at most once per reloadCheckInterval), so that it is
// taken once it becomes valid.
func (r *certReloader) failedLocked(stamps []fileStamp, err error) {
	if !errors.Is(err, errCertNotYetValid) {
		r.stamps = stamps
	}
	if equalStamps(stamps, r.failed) {
		return
	}
	r.failed = stamps
	if r.onError != nil {
		r.onError(err)
	}
}

func equalStamps(a, b []fileStamp) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].mod.Equal(b[i].mod) || a[i].size != b[i].size || a[i].mode != b[i].mode {
			return false
		}
	}
	return true
}

// caPool returns the CA pool, reloading first if a file changed since the
// last look.
func (r *certReloader) caPool() *x509.CertPool {
	_, pool := r.current()
	return pool
}

// minTLSVersion is the oldest TLS version any listener or dialer of a
// member speaks.
const minTLSVersion = tls.VersionTLS12

// cipherSuites are the TLS 1.2 cipher suites every listener (gRPC, HTTP,
// peer) and every dialer of a member accepts: ECDHE key exchange with an
// AEAD (AES-GCM or ChaCha20-Poly1305) only. No CBC mode (padding oracles,
// Lucky13) and no SHA-1 MAC; these are the suites gRPC keeps by default
// (it drops those RFC 7540 forbids for HTTP/2), named here so that the
// HTTP listener, which gRPC's defaults do not reach, has the same. TLS 1.3
// suites are not configurable in Go and are all AEADs.
func cipherSuites() []uint16 {
	return []uint16{
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
		tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	}
}

// serverConfig is a tls.Config for a listener that presents the current
// certificate. clientAuth says what it asks of clients; a verifying mode
// checks them against the current CA pool.
func (r *certReloader) serverConfig(clientAuth tls.ClientAuthType, nextProtos ...string) *tls.Config {
	return &tls.Config{
		MinVersion:   minTLSVersion,
		CipherSuites: cipherSuites(),
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			cert, pool := r.current()
			return &tls.Config{
				MinVersion:   minTLSVersion,
				CipherSuites: cipherSuites(),
				Certificates: []tls.Certificate{*cert},
				ClientAuth:   clientAuth,
				ClientCAs:    pool,
				NextProtos:   nextProtos,
			}, nil
		},
	}
}

// clientConfig is a tls.Config for dialing a peer: it presents the current
// certificate and verifies the server's against the current CA pool and the
// dialed host (so reloading the CA file needs no new connection setup).
func (r *certReloader) clientConfig() *tls.Config {
	return &tls.Config{
		MinVersion:   minTLSVersion,
		CipherSuites: cipherSuites(),
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			cert, _ := r.current()
			return cert, nil
		},
		// Verification is done in VerifyConnection, against the pool of
		// the moment; InsecureSkipVerify only turns off the built-in check.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			_, pool := r.current()
			return certchain.Verify(cs.PeerCertificates, pool, cs.ServerName, x509.ExtKeyUsageServerAuth)
		},
	}
}

// security is the TLS material and the bearer tokens the config names,
// loaded from their files (and reloaded, see certReloader and tokenStore).
type security struct {
	clientTLS, peerTLS *certReloader // nil when not configured
	tokens             *tokenStore   // nil without auth_token_file
	// joinTLS secures the call to the --join member's client listener;
	// nil is plaintext.
	joinTLS *tls.Config
}

// loadSecurity reads the TLS material and the token file named in the
// config, so that a bad file stops the start with a clear error.
func loadSecurity(cfg *Config, logger *slog.Logger) (*security, error) {
	sec := &security{}
	var err error
	logReloadErr := func(err error) {
		logger.Error("reloading security material failed; keeping the previous one", "err", err)
	}
	if cfg.clientTLS() {
		if sec.clientTLS, err = newCertReloader("client", cfg.ClientCertFile, cfg.ClientKeyFile, cfg.ClientCAFile); err != nil {
			return nil, err
		}
		sec.clientTLS.onError = logReloadErr
	}
	if cfg.peerTLS() {
		if sec.peerTLS, err = newCertReloader("peer", cfg.PeerCertFile, cfg.PeerKeyFile, cfg.PeerCAFile); err != nil {
			return nil, err
		}
		sec.peerTLS.onError = logReloadErr
	}
	if cfg.AuthTokenFile != "" {
		if sec.tokens, err = newTokenStore(cfg.AuthTokenFile); err != nil {
			return nil, err
		}
		sec.tokens.onError = logReloadErr
	}
	if cfg.Join != "" {
		if sec.joinTLS, err = sec.joinConfig(cfg); err != nil {
			return nil, err
		}
	}
	return sec, nil
}

// clientAuthType is what the client listeners ask of clients. A client
// certificate is requested but verified by api's interceptor, not the
// handshake, so that an expired or foreign one is refused with a clear
// Unauthenticated (HTTP 401) instead of a failed handshake.
func (c *Config) clientAuthType() tls.ClientAuthType {
	// With peer TLS a joining member presents its peer certificate
	// (api, peerjoin.go).
	if c.ClientCAFile != "" || c.peerTLS() {
		return tls.RequestClientCert
	}
	return tls.NoClientCert
}

// logSecurity says at start-up how the listeners are protected.
func (s *security) log(cfg *Config, logger *slog.Logger) {
	if exposed := cfg.insecureExposure(); len(exposed) > 0 {
		logger.Warn("--insecure: listening on non-loopback addresses without TLS and authentication; anyone who reaches them can read and change the schema or join the cluster",
			"addresses", exposed)
	}
	logInsecurePeer(cfg, logger)
	if !cfg.authEnabled() {
		if cfg.Insecure {
			logger.Warn("no authentication configured (--insecure)")
		} else {
			logger.Info("no authentication configured: listening on loopback only")
		}
	} else if cfg.ClientCAFile != "" && cfg.AuthCertRoles == "" && s.tokens == nil {
		logger.Warn("client_ca_file is set but auth_cert_roles is empty: verified client certificates hold no role")
	}
	if cfg.AuthTokenFile != "" && s.clientTLS == nil {
		logger.Warn("bearer tokens without client TLS travel in plaintext; this is only safe on loopback")
	}
	logPprof(cfg, cfg.authEnabled(), logger)
}

// authOptions are the handlers' authentication: the config's, with the
// loaded tokens and CAs (as reloaded), and m, which names the member a
// peer certificate belongs to.
func (s *security) authOptions(cfg *Config, m *member.Member) api.AuthOptions {
	opts := api.AuthOptions{Enabled: cfg.authEnabled()}
	opts.CertRoles, _ = cfg.AuthCertRoles.Map() // validated
	if s.tokens != nil {
		opts.Tokens = s.tokens
	}
	if cfg.ClientCAFile != "" {
		opts.ClientCAs = s.clientTLS.caPool
	}
	if s.peerTLS != nil {
		opts.PeerCAs, opts.MemberName = s.peerTLS.caPool, m.CertificateMemberName
	}
	return opts
}

// reload reads the certificate, key, CA and token files again. Material
// that fails to load is kept as it was.
func (s *security) reload() error {
	var errs []error
	for _, r := range []*certReloader{s.clientTLS, s.peerTLS} {
		if r != nil {
			errs = append(errs, r.Reload())
		}
	}
	if s.tokens != nil {
		errs = append(errs, s.tokens.Reload())
	}
	return errors.Join(errs...)
}

// joinConfig is the TLS config for dialing the client listener of the
// member named by --join, nil (plaintext) without client TLS. With client
// TLS the server is verified against the client and peer CAs and the
// system roots, and this member presents its peer certificate, which the
// cluster accepts for ListMembers as a current member's (api, peerjoin.go).
func (s *security) joinConfig(cfg *Config) (*tls.Config, error) {
	if s.clientTLS == nil {
		return nil, nil
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	for _, f := range []struct{ setting, file string }{{"client_ca_file", cfg.ClientCAFile}, {"peer_ca_file", cfg.PeerCAFile}} {
		if f.file == "" {
			continue
		}
		pem, err := readMaterial(f.setting, f.file, caBundle)
		if err != nil {
			return nil, fmt.Errorf("join: %w", err)
		}
		roots.AppendCertsFromPEM(pem)
	}
	tc := &tls.Config{MinVersion: minTLSVersion, CipherSuites: cipherSuites(), RootCAs: roots}
	if s.peerTLS != nil {
		tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			cert, _ := s.peerTLS.current()
			return cert, nil
		}
	}
	return tc, nil
}
