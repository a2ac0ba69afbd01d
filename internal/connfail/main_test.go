package connfail

import (
	"testing"

	"go.uber.org/goleak"
)

// The tests start gRPC and HTTP servers and clients: none may outlive them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
