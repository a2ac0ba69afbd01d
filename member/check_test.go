package member

import (
	"errors"
	"strings"
	"testing"
)

// TestStillDiverged: a repair whose member still diverges afterwards is an
// error that says why and what to do; agreeing or only behind is not.
func TestStillDiverged(t *testing.T) {
	check := &ClusterCheck{Reference: "n1", Members: []MemberCheck{
		{Name: "n1", State: "agrees"},
		{Name: "n2", State: "behind"},
		{Name: "n3", State: "diverged", DivergedSinceEpoch: 42},
	}}
	for _, name := range []string{"n1", "n2"} {
		if err := stillDiverged(check, name); err != nil {
			t.Errorf("%s: %v, want no error", name, err)
		}
	}
	err := stillDiverged(check, "n3")
	var pe *PreconditionError
	if !errors.As(err, &pe) || !errors.Is(err, ErrPrecondition) {
		t.Fatalf("n3: %v, want a *PreconditionError", err)
	}
	for _, want := range []string{"repair member n3", "differs from n1 at epoch 42", "cluster remove n3", "--join"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
