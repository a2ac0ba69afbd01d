package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/internal/safetext"
)

// clientFlags are the flags every client subcommand takes.
type clientFlags struct {
	endpoints string
	// readEndpoints are the members the reads and watches go to
	// (client.Config.ReadEndpoints), comma separated; empty: none.
	readEndpoints string
	timeout       time.Duration
	// TLS and authentication (see README "Security").
	cacert, cert, key, token string
}

// register adds the endpoint, timeout and credential flags.
func (f *clientFlags) register(cmd *cobra.Command) {
	f.registerWithTimeout(cmd, "deadline for the whole command")
}

// registerWithTimeout is register with another meaning of --timeout, for
// a command that runs until interrupted.
func (f *clientFlags) registerWithTimeout(cmd *cobra.Command, timeoutUsage string) {
	cmd.Flags().StringVar(&f.endpoints, "endpoints", "127.0.0.1:7070", "gRPC addresses of metalog members, comma separated")
	cmd.Flags().StringVar(&f.readEndpoints, "read-endpoints", "", "gRPC addresses of the members that serve reads and watches (observers), comma separated; reads fall back to --endpoints when none answers, changes always go to --endpoints")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 15*time.Second, timeoutUsage)
	f.registerCredentials(cmd)
}

// registerCredentials adds only the TLS and token flags.
func (f *clientFlags) registerCredentials(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.cacert, "cacert", "", "PEM CA bundle that verifies the server (turns on TLS)")
	cmd.Flags().StringVar(&f.cert, "cert", "", "PEM client certificate (turns on TLS; with --key)")
	cmd.Flags().StringVar(&f.key, "key", "", "PEM key of --cert")
	cmd.Flags().StringVar(&f.token, "token", "", "bearer token (default $METALOG_TOKEN); needs TLS unless the endpoint is loopback")
}

// credentials returns the TLS configuration the flags ask for (nil:
// plaintext) and the bearer token (--token, or $METALOG_TOKEN).
func (f *clientFlags) credentials() (*tls.Config, string, error) {
	if (f.cert == "") != (f.key == "") {
		return nil, "", errors.New("--cert and --key go together")
	}
	var cfg *tls.Config
	if f.cacert != "" || f.cert != "" {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
		if f.cacert != "" {
			pem, err := os.ReadFile(f.cacert)
			if err != nil {
				return nil, "", fmt.Errorf("--cacert: %w", err)
			}
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				return nil, "", fmt.Errorf("--cacert %s: no certificate found", f.cacert)
			}
		}
		if f.cert != "" {
			pair, err := tls.LoadX509KeyPair(f.cert, f.key)
			if err != nil {
				return nil, "", fmt.Errorf("--cert/--key: %w", err)
			}
			cfg.Certificates = []tls.Certificate{pair}
		}
	}
	token := f.token
	if token == "" {
		token = os.Getenv("METALOG_TOKEN")
	}
	return cfg, token, nil
}

// open returns a client for the endpoints and credentials of the flags,
// whose calls (and a watch's resumes) give up after --timeout.
func (f *clientFlags) open() (*client.Client, error) {
	eps := splitAddrs(f.endpoints)
	if len(eps) == 0 {
		return nil, errors.New("--endpoints: no endpoint given")
	}
	if f.timeout <= 0 {
		return nil, fmt.Errorf("--timeout %v: want a duration above 0", f.timeout)
	}
	tlsCfg, token, err := f.credentials()
	if err != nil {
		return nil, err
	}
	c, err := client.New(client.Config{Endpoints: eps, ReadEndpoints: splitAddrs(f.readEndpoints), TLS: tlsCfg, Token: token, Timeout: f.timeout})
	return c, flagError(err)
}

// splitAddrs returns the addresses of a comma-separated flag, trimmed,
// leaving out empty ones.
func splitAddrs(list string) []string {
	var addrs []string
	for _, a := range strings.Split(list, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	return addrs
}

// flagError words a client configuration error in terms of the flags.
func flagError(err error) error {
	var plain *client.PlaintextTokenError
	if errors.As(err, &plain) {
		return fmt.Errorf("--token: refusing to send a bearer token in plaintext to %s; pass --cacert (TLS) or use a loopback endpoint", plain.Endpoint)
	}
	return err
}

// describeErr turns a gRPC error into "Code: message" for the terminal,
// with the server's retry-after (client.RetryAfter) when it sent one and
// the message does not say it already. The message is escaped on one
// line (safetext.Line): it quotes what users wrote, and a server may
// quote it raw.
func describeErr(err error) error {
	if st, ok := status.FromError(err); ok && err != nil {
		msg := safetext.Line(st.Message())
		if d, ok := client.RetryAfter(err); ok && !strings.Contains(msg, "retry after") {
			msg += fmt.Sprintf(" (retry after %v)", d)
		}
		return fmt.Errorf("%s: %s", st.Code(), msg)
	}
	return err
}
