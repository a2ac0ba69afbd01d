package client_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/metalog/metalog/internal/testkit/serverkit"
)

// live is the gRPC address of a one-member cluster started for the tests.
var live string

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	srv, err := serverkit.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	live = srv.GRPCAddr()
	code := m.Run()
	if err := srv.Stop(); err != nil {
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
