package client_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/metalog/metalog/server"
)

// live is the gRPC address of a one-member cluster started for the tests.
var live string

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	srv, stop, err := startServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	live = srv.GRPCAddr()
	code := m.Run()
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the server:", err)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	return code
}

// startServer starts a one-member cluster in a temporary directory on
// loopback ports the kernel picks; stop closes it and removes the
// directory.
func startServer() (srv *server.Server, stop func() error, err error) {
	dir, err := os.MkdirTemp("", "metalog-client-test-")
	if err != nil {
		return nil, nil, err
	}
	cfg := server.DefaultConfig()
	cfg.DataDir = dir
	cfg.GRPCAddr, cfg.HTTPAddr, cfg.PeerAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	srv, err = server.Start(cfg, nil)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return srv, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		defer os.RemoveAll(dir)
		return srv.Close(ctx)
	}, nil
}
