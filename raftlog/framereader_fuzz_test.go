package raftlog

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// FuzzFrameReader reads arbitrary bytes as a log stream's frames, with a
// small limit and budget, and through a reader that returns them in
// pieces: every frame returned is at most the limit and is exactly the
// bytes its length announced, in order; a frame past the limit is
// refused; the budget is never exceeded and is all given back.
func FuzzFrameReader(f *testing.F) {
	const limit = 1 << 20
	f.Add([]byte{})
	f.Add([]byte{0})
	f.Add(append(binary.AppendUvarint(nil, 3), "abc"...))
	f.Add(binary.AppendUvarint(nil, limit+1))
	f.Add(binary.AppendUvarint(nil, 1<<62))
	f.Add(append(binary.AppendUvarint(nil, frameFreeBytes+1), make([]byte, 100)...))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, in []byte) {
		budget := &frameBudget{max: limit + frameFreeBytes}
		fr := &frameReader{r: bufio.NewReaderSize(halfReader{bytes.NewReader(in)}, 16), limit: limit, budget: budget}
		defer func() {
			fr.release()
			if used := budget.used.Load(); used != 0 {
				t.Fatalf("budget used %d after release", used)
			}
		}()
		rest := in
		for {
			b, err := fr.next()
			if used := budget.used.Load(); used > budget.max {
				t.Fatalf("budget used %d, more than %d", used, budget.max)
			}
			if err != nil {
				size, n := binary.Uvarint(rest)
				if n > 0 && size > limit && !errors.Is(err, errFrameTooLarge) {
					t.Fatalf("a frame of %d bytes, past the limit: %v, want errFrameTooLarge", size, err)
				}
				return
			}
			size, n := binary.Uvarint(rest)
			if n <= 0 || size > limit || uint64(len(b)) != size || !bytes.Equal(b, rest[n:n+int(size)]) {
				t.Fatalf("frame of %d bytes returned where the input announces %d (prefix %d bytes)", len(b), size, n)
			}
			rest = rest[n+int(size):]
		}
	})
}
