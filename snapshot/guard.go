package snapshot

import (
	"errors"
	"fmt"
)

// WarnPercent is the share of the limit at which a Guard starts warning.
const WarnPercent = 75

// ErrTooLarge is matched by the error a Guard returns for a snapshot over
// its limit.
var ErrTooLarge = errors.New("snapshot: too large")

// TooLargeError reports a snapshot over max_mutation_size.
type TooLargeError struct {
	// Size is the encoded size in bytes.
	Size int
	// Max is the limit in bytes.
	Max int
}

// Error returns e.g. "snapshot of 1200 bytes exceeds max_mutation_size
// 1000".
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("snapshot of %d bytes exceeds max_mutation_size %d", e.Size, e.Max)
}

// Is matches ErrTooLarge.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// Guard watches the sizes of successive snapshots against a limit
// (max_mutation_size): it asks for a warning once each time the size rises
// to WarnPercent of the limit, and refuses sizes over the limit, so that
// snapshots never stop being written silently. A Guard is not safe for
// concurrent use; its owner serialises Check.
type Guard struct {
	max   int
	above bool // the last size was at or over the warning threshold
}

// NewGuard returns a guard for the limit max in bytes; max <= 0 disables
// both the warning and the limit.
func NewGuard(max int) *Guard { return &Guard{max: max} }

// Max returns the limit in bytes.
func (g *Guard) Max() int { return g.max }

// Check records size, the length of an encoded snapshot. warn is true when
// size reached WarnPercent of the limit and the previous size checked was
// below it (or there was none): a warning per upward crossing, not per
// snapshot. err is a *TooLargeError (matching ErrTooLarge) when size is
// over the limit; a size that jumps straight past the limit returns both.
func (g *Guard) Check(size int) (warn bool, err error) {
	if g.max <= 0 {
		return false, nil
	}
	// size*100 >= max*WarnPercent, in 64-bit arithmetic without rounding.
	above := int64(size)*100 >= int64(g.max)*WarnPercent
	warn = above && !g.above
	g.above = above
	if size > g.max {
		err = &TooLargeError{Size: size, Max: g.max}
	}
	return warn, err
}
