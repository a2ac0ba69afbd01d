package snapshot_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/metalog/metalog/snapshot"
)

func TestGuardCrossings(t *testing.T) {
	const max = 1000 // warns at 750
	type step struct {
		size     int
		warn     bool
		tooLarge bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"below", []step{{0, false, false}, {749, false, false}, {100, false, false}}},
		{"at threshold warns", []step{{750, true, false}}},
		{"once per crossing", []step{{700, false, false}, {800, true, false}, {900, false, false}, {1000, false, false}, {760, false, false}}},
		{"again after dropping below", []step{{800, true, false}, {749, false, false}, {750, true, false}, {751, false, false}}},
		{"over max", []step{{800, true, false}, {1001, false, true}, {5000, false, true}, {999, false, false}}},
		{"straight past max", []step{{10, false, false}, {2000, true, true}, {2000, false, true}}},
		{"over max then below then over", []step{{1001, true, true}, {10, false, false}, {1001, true, true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := snapshot.NewGuard(max)
			for i, s := range tt.steps {
				warn, err := g.Check(s.size)
				if warn != s.warn || errors.Is(err, snapshot.ErrTooLarge) != s.tooLarge || (err == nil) == s.tooLarge {
					t.Fatalf("step %d Check(%d) = %v, %v; want warn %v, too large %v", i, s.size, warn, err, s.warn, s.tooLarge)
				}
			}
		})
	}
}

func TestGuardErrorNamesSizeAndLimit(t *testing.T) {
	g := snapshot.NewGuard(16 << 20)
	_, err := g.Check(17696794)
	const want = "snapshot of 17696794 bytes exceeds max_mutation_size 16777216"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
	var tl *snapshot.TooLargeError
	if !errors.As(fmt.Errorf("wrapped: %w", err), &tl) || tl.Size != 17696794 || tl.Max != 16<<20 {
		t.Fatalf("errors.As TooLargeError: %+v", tl)
	}
	if g.Max() != 16<<20 {
		t.Fatalf("Max() = %d", g.Max())
	}
}

func TestGuardDisabled(t *testing.T) {
	g := snapshot.NewGuard(0)
	if warn, err := g.Check(1 << 40); warn || err != nil {
		t.Fatalf("disabled guard: %v, %v", warn, err)
	}
}

func TestGuardLargeSizesDoNotOverflow(t *testing.T) {
	g := snapshot.NewGuard(1 << 40)
	if warn, err := g.Check(1<<40 - 1); !warn || err != nil {
		t.Fatalf("Check just under 1 TiB: %v, %v", warn, err)
	}
}
