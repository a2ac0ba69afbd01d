package member

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestGuardrailErrorsSayItOnce: SetGuardrails refuses a bad change with
// the guardrails package's message as it is (the setting, the value and
// the reason, once), whichever check refused it, and changes nothing.
func TestGuardrailErrorsSayItOnce(t *testing.T) {
	m := startMember(t, nil)
	ctx := testContext(t)
	before := m.core.sm.Current().Epoch
	for _, tc := range []struct {
		set  map[string]string
		want string
	}{
		{map[string]string{"tables_warn_threshold": "abc"}, `guardrail tables_warn_threshold="abc": not an integer (use -1 to disable)`},
		{map[string]string{"tables_warn_threshold": "99999999999999999999"}, `guardrail tables_warn_threshold="99999999999999999999": out of range (at most 9223372036854775807)`},
		{map[string]string{"tables_wanr_threshold": "5"}, `guardrail tables_wanr_threshold: unknown setting; did you mean tables_warn_threshold?`},
		{map[string]string{"tables_warn_threshold": "10", "tables_fail_threshold": "5"}, `guardrail tables_warn_threshold="10": must not be greater than tables_fail_threshold (5)`},
		{map[string]string{"keyspaces_fail_threshold": "-3"}, `guardrail keyspaces_fail_threshold="-3": must be -1 (disabled) or non-negative`},
	} {
		_, _, err := m.Writes().SetGuardrails(ctx, "", "", tc.set)
		var ae *ArgumentError
		if !errors.As(err, &ae) || !errors.Is(err, ErrInvalidArgument) || err.Error() != tc.want {
			t.Errorf("%v: %v, want InvalidArgument %q", tc.set, err, tc.want)
		}
	}
	if got := m.core.sm.Current().Epoch; got != before {
		t.Errorf("epoch %d after refused changes, want %d", got, before)
	}
}

// TestMinEpochTimeoutSaysItOnce: a read waiting for an epoch this member
// does not reach says, in one sentence, what was asked, where the member
// is and that the deadline passed: the caller's own deadline is
// DeadlineExceeded, and the member's request_timeout, which bounds a
// request without a deadline, Unavailable (another member may be further
// along).
func TestMinEpochTimeoutSaysItOnce(t *testing.T) {
	m := startMember(t, func(c *Config) { c.RequestTimeout = 100 * time.Millisecond })
	at := m.core.sm.Current().Epoch
	ctx, cancel := context.WithTimeout(testContext(t), 50*time.Millisecond)
	defer cancel()
	_, err := m.Reads().Read(ctx, at+100, Local, nil)
	want := fmt.Sprintf("min_epoch %d: this member was still at epoch %d when the request deadline passed", at+100, at)
	if kinds(err) != "[context.DeadlineExceeded]" || err.Error() != want {
		t.Fatalf("Read: %v, want DeadlineExceeded %q", err, want)
	}
	_, err = m.Reads().Read(context.Background(), at+100, Local, nil)
	want = fmt.Sprintf("min_epoch %d: this member was still at epoch %d after waiting request_timeout (100ms), the bound of a request without a deadline of its own: another member may be further along", at+100, at)
	if kinds(err) != "[ErrUnavailable]" || err.Error() != want {
		t.Fatalf("Read without a deadline: %v, want Unavailable %q", err, want)
	}
	if msg := err.Error(); strings.Count(msg, "epoch") != 2 || strings.Contains(msg, "context") {
		t.Errorf("%q repeats itself", msg)
	}

	ctx, cancel = context.WithCancel(testContext(t))
	cancel()
	_, err = m.Reads().Read(ctx, at+100, Local, nil)
	want = fmt.Sprintf("min_epoch %d: this member was still at epoch %d when the request was canceled", at+100, at)
	if kinds(err) != "[context.Canceled]" || err.Error() != want {
		t.Errorf("Read canceled: %v (%v), want %q", err, kinds(err), want)
	}
}
