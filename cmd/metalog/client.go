package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/api"
	pb "github.com/metalog/metalog/api/metalogpb"
)

// maxResponseBytes bounds one answer the CLI accepts.
const maxResponseBytes = 1 << 30

// clientFlags are the flags every client subcommand takes.
type clientFlags struct {
	endpoints string
	timeout   time.Duration
	// TLS and authentication (see README "Security").
	cacert, cert, key, token string
}

// register adds the endpoint, timeout and credential flags.
func (f *clientFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.endpoints, "endpoints", "127.0.0.1:7070", "gRPC addresses of metalog members, comma separated")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 15*time.Second, "deadline for the whole command")
	f.registerCredentials(cmd)
}

// registerCredentials adds only the TLS and token flags.
func (f *clientFlags) registerCredentials(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.cacert, "cacert", "", "PEM CA bundle that verifies the server (turns on TLS)")
	cmd.Flags().StringVar(&f.cert, "cert", "", "PEM client certificate (turns on TLS; with --key)")
	cmd.Flags().StringVar(&f.key, "key", "", "PEM key of --cert")
	cmd.Flags().StringVar(&f.token, "token", "", "bearer token (default $METALOG_TOKEN); needs TLS unless the endpoint is loopback")
}

// dialOptions builds the transport and per-RPC credentials for endpoint ep.
func (f *clientFlags) dialOptions(ep string) ([]grpc.DialOption, error) {
	if (f.cert == "") != (f.key == "") {
		return nil, errors.New("--cert and --key go together")
	}
	useTLS := f.cacert != "" || f.cert != ""
	creds := insecure.NewCredentials()
	if useTLS {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if f.cacert != "" {
			pem, err := os.ReadFile(f.cacert)
			if err != nil {
				return nil, fmt.Errorf("--cacert: %w", err)
			}
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--cacert %s: no certificate found", f.cacert)
			}
		}
		if f.cert != "" {
			pair, err := tls.LoadX509KeyPair(f.cert, f.key)
			if err != nil {
				return nil, fmt.Errorf("--cert/--key: %w", err)
			}
			cfg.Certificates = []tls.Certificate{pair}
		}
		creds = credentials.NewTLS(cfg)
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	token := f.token
	if token == "" {
		token = os.Getenv("METALOG_TOKEN")
	}
	if token != "" {
		if !useTLS && !api.IsLoopback(ep) {
			return nil, fmt.Errorf("--token: refusing to send a bearer token in plaintext to %s; pass --cacert (TLS) or use a loopback endpoint", ep)
		}
		opts = append(opts, grpc.WithPerRPCCredentials(bearer(token)))
	}
	return opts, nil
}

// bearer sends "authorization: Bearer TOKEN" with every call.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

// RequireTransportSecurity is false so that a loopback endpoint works
// without TLS; dialOptions refuses plaintext to any other.
func (bearer) RequireTransportSecurity() bool { return false }

// call runs fn against the endpoints in turn until one answers with
// something other than Unavailable (or a connection failure), going round
// them again with a growing pause until ctx ends. fn must be safe to retry
// (Execute carries a request id for that).
func (f *clientFlags) call(ctx context.Context, fn func(context.Context, pb.MetadataServiceClient) error) error {
	var eps []string
	for _, ep := range strings.Split(f.endpoints, ",") {
		if ep = strings.TrimSpace(ep); ep != "" {
			eps = append(eps, ep)
		}
	}
	if len(eps) == 0 {
		return errors.New("--endpoints: no endpoint given")
	}
	conns := make([]*grpc.ClientConn, len(eps))
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	pause := 100 * time.Millisecond
	var lastErr error
	for {
		for i, ep := range eps {
			if conns[i] == nil {
				// A whole schema of 100,000 tables is ~10 MB of protobuf.
				opts, err := f.dialOptions(ep)
				if err != nil {
					return err
				}
				c, err := grpc.NewClient(ep, append(opts, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxResponseBytes)))...)
				if err != nil {
					return fmt.Errorf("--endpoints %s: %w", ep, err)
				}
				conns[i] = c
			}
			err := fn(ctx, pb.NewMetadataServiceClient(conns[i]))
			if status.Code(err) != codes.Unavailable {
				return err
			}
			lastErr = status.Errorf(codes.Unavailable, "%s: %s", ep, status.Convert(err).Message())
		}
		select {
		case <-ctx.Done():
			return lastErr
		case <-time.After(pause):
		}
		pause = min(2*pause, 2*time.Second)
	}
}

// describeErr turns a gRPC error into "Code: message" for the terminal.
func describeErr(err error) error {
	if st, ok := status.FromError(err); ok && err != nil {
		return fmt.Errorf("%s: %s", st.Code(), st.Message())
	}
	return err
}
