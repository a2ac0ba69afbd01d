package bench

import (
	"bytes"
	"strings"
	"sync/atomic"
	"testing"
)

// syncBuffer is a bytes.Buffer safe for the progress goroutine and the test.
type syncBuffer struct {
	mu  chan struct{}
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu <- struct{}{}
	defer func() { <-b.mu }()
	return b.buf.Write(p)
}

func TestProgressFinalLine(t *testing.T) {
	w := &syncBuffer{mu: make(chan struct{}, 1)}
	var done atomic.Int64
	stop := progress(w, 200, &done)
	done.Store(200)
	stop()
	if got := w.buf.String(); !strings.HasPrefix(got, "\r200/200 tables in ") || !strings.HasSuffix(got, "\n") {
		t.Errorf("progress wrote %q, want a final \\r200/200 tables in ... line", got)
	}
	// No writer: nothing runs, stop returns at once.
	progress(nil, 1, &done)()
}
