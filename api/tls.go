package api

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
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

	mu        sync.Mutex // guards the fields below
	cert      *tls.Certificate
	prevLeaf  []byte // DER of the certificate before the last reload
	pool      *x509.CertPool
	stamps    []fileStamp
	lastCheck time.Time
	onError   func(error) // called (with mu held) when a change fails to load
}

// fileStamp identifies a version of a file cheaply.
type fileStamp struct {
	mod  time.Time
	size int64
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
			out[i] = fileStamp{mod: fi.ModTime(), size: fi.Size()}
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

func (r *certReloader) reloadLocked() error {
	stamps := stampsOf(r.files())
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("%s tls: loading %s and %s: %w", r.what, r.certFile, r.keyFile, err)
	}
	var pool *x509.CertPool
	if r.caFile != "" {
		if pool, err = loadPool(r.caFile); err != nil {
			return fmt.Errorf("%s tls: %w", r.what, err)
		}
	}
	if r.cert != nil {
		r.prevLeaf = r.cert.Leaf.Raw
	}
	r.cert, r.pool, r.stamps = &cert, pool, stamps
	r.lastCheck = time.Now()
	return nil
}

// loadPool reads a PEM bundle of CA certificates.
func loadPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA file %s: %w", file, errNoCertificate)
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
				r.stamps = stamps // do not retry a broken file at every handshake
				if r.onError != nil {
					r.onError(err)
				}
			}
		}
	}
	return r.cert, r.pool
}

func equalStamps(a, b []fileStamp) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].mod.Equal(b[i].mod) || a[i].size != b[i].size {
			return false
		}
	}
	return true
}

// serverConfig is a tls.Config for a listener that presents the current
// certificate. clientAuth says what it asks of clients; a verifying mode
// checks them against the current CA pool.
func (r *certReloader) serverConfig(clientAuth tls.ClientAuthType, nextProtos ...string) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			cert, pool := r.current()
			return &tls.Config{
				MinVersion:   tls.VersionTLS12,
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
		MinVersion: tls.VersionTLS12,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			cert, _ := r.current()
			return cert, nil
		},
		// Verification is done in VerifyConnection, against the pool of
		// the moment; InsecureSkipVerify only turns off the built-in check.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			_, pool := r.current()
			return verifyChain(cs.PeerCertificates, pool, cs.ServerName, x509.ExtKeyUsageServerAuth)
		},
	}
}

// pinnedConfig is a tls.Config for the gateway's own connection to this
// server's gRPC listener: it accepts exactly the certificate the listener
// presents (the current one, or the one before a reload).
func (r *certReloader) pinnedConfig() *tls.Config {
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("gateway: the gRPC listener presented no certificate")
			}
			got := cs.PeerCertificates[0].Raw
			cert, _ := r.current()
			r.mu.Lock()
			prev := r.prevLeaf
			r.mu.Unlock()
			if bytes.Equal(got, cert.Leaf.Raw) || (prev != nil && bytes.Equal(got, prev)) {
				return nil
			}
			return errors.New("gateway: the gRPC listener presented a certificate that is not this server's")
		},
	}
}

// verifyChain verifies a presented chain (leaf first) against pool at the
// current time, for usage, and for host when not empty.
func verifyChain(chain []*x509.Certificate, pool *x509.CertPool, host string, usage x509.ExtKeyUsage) error {
	if len(chain) == 0 {
		return errors.New("no certificate presented")
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	_, err := chain[0].Verify(x509.VerifyOptions{
		Roots: pool, Intermediates: inter, DNSName: host,
		KeyUsages: []x509.ExtKeyUsage{usage},
	})
	return err
}

// security is the TLS material and the bearer tokens the config names,
// loaded from their files (and reloaded, see certReloader and tokenStore).
type security struct {
	clientTLS, peerTLS *certReloader // nil when not configured
	tokens             *tokenStore   // nil without auth_token_file
	auth               *authenticator
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
	var clientCAs *certReloader
	if cfg.ClientCAFile != "" {
		clientCAs = sec.clientTLS
	}
	sec.auth = newAuthenticator(cfg, sec.tokens, clientCAs)
	sec.auth.onRefusal = func(method, id string) {
		logger.Debug("request refused", "method", method, "identity", id)
	}
	if cfg.Join != "" {
		if sec.joinTLS, err = sec.joinConfig(cfg); err != nil {
			return nil, err
		}
	}
	return sec, nil
}

// clientAuthType is what the client listeners ask of clients. A client
// certificate is requested but verified by the interceptor, not the
// handshake, so that an expired or foreign one is refused with a clear
// Unauthenticated (HTTP 401) instead of a failed handshake.
func (c *Config) clientAuthType() tls.ClientAuthType {
	// With peer TLS a joining member presents its peer certificate
	// (peerjoin.go).
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
	if !s.auth.enabled {
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
// cluster accepts for ListMembers as a current member's (peerjoin.go).
func (s *security) joinConfig(cfg *Config) (*tls.Config, error) {
	if s.clientTLS == nil {
		return nil, nil
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	for _, f := range []string{cfg.ClientCAFile, cfg.PeerCAFile} {
		if f == "" {
			continue
		}
		pem, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("join: %w", err)
		}
		roots.AppendCertsFromPEM(pem)
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots}
	if s.peerTLS != nil {
		tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			cert, _ := s.peerTLS.current()
			return cert, nil
		}
	}
	return tc, nil
}
