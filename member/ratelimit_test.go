package member

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newTestLimiter(rate float64, burst int) (*rateLimiter, *fakeClock, *prometheus.CounterVec) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	limited := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "limited"}, []string{"identity"})
	count := func(id string) { limited.WithLabelValues(id).Inc() }
	return newRateLimiter(rate, burst, clock.now, count), clock, limited
}

// retryAfter is take's refusal delay, failing the test when take admits.
func retryAfter(t *testing.T, l *rateLimiter, id string, n int) time.Duration {
	t.Helper()
	err := l.take(id, n)
	var rl *RateLimitError
	if !errors.As(err, &rl) || !errors.Is(err, ErrRateLimited) || kinds(err) != "[ErrRateLimited]" {
		t.Fatalf("take(%s, %d) = %v, want a refusal", id, n, err)
	}
	if rl.Identity != id || rl.RetryAfter <= 0 {
		t.Fatalf("refusal %+v", rl)
	}
	return rl.RetryAfter
}

func admit(t *testing.T, l *rateLimiter, id string, n int) {
	t.Helper()
	if err := l.take(id, n); err != nil {
		t.Fatalf("take(%s, %d): %v, want admitted", id, n, err)
	}
}

// TestRateLimiterBurstThenRate: a full bucket admits burst changes, then
// one per interval; a refusal says how long until the next is admitted,
// and waiting exactly that admits (integer time: no float drift).
func TestRateLimiterBurstThenRate(t *testing.T) {
	l, clock, limited := newTestLimiter(2, 3) // one change per 500ms
	for range 3 {
		admit(t, l, "token:a", 1)
	}
	if d := retryAfter(t, l, "token:a", 1); d != 500*time.Millisecond {
		t.Fatalf("retry after %v, want 500ms", d)
	}
	clock.advance(499 * time.Millisecond)
	if d := retryAfter(t, l, "token:a", 1); d != time.Millisecond {
		t.Fatalf("retry after %v, want 1ms", d)
	}
	clock.advance(time.Millisecond)
	admit(t, l, "token:a", 1)
	// 1000 intervals later it is full again, not fuller: burst 3.
	clock.advance(1000 * 500 * time.Millisecond)
	for range 3 {
		admit(t, l, "token:a", 1)
	}
	retryAfter(t, l, "token:a", 1)
	if got := testutil.ToFloat64(limited.WithLabelValues("token:a")); got != 3 {
		t.Errorf("limited{token:a} = %v, want 3", got)
	}
}

// TestRateLimiterDebt: a request larger than the burst is admitted from a
// bucket holding one change and puts it in debt; while in debt every
// request is refused (and not charged), until the debt is paid.
func TestRateLimiterDebt(t *testing.T) {
	l, clock, _ := newTestLimiter(1, 10) // one change per second
	admit(t, l, "cert:ci", 50)           // 10 - 50 = 40 in debt
	if d := retryAfter(t, l, "cert:ci", 1); d != 41*time.Second {
		t.Fatalf("retry after %v, want 41s (40 of debt, and one change to hold)", d)
	}
	// Refused requests cost nothing: the debt does not grow.
	for range 100 {
		retryAfter(t, l, "cert:ci", 50)
	}
	clock.advance(40 * time.Second)
	if d := retryAfter(t, l, "cert:ci", 1); d != time.Second {
		t.Fatalf("retry after %v, want 1s", d)
	}
	clock.advance(time.Second)
	admit(t, l, "cert:ci", 50)
	// A 50-statement file is never refused for ever by a burst of 10.
	clock.advance(51 * time.Second)
	admit(t, l, "cert:ci", 50)
}

// TestRateLimiterConcurrent: requests racing on one bucket are admitted
// exactly as many times as the bucket holds changes.
func TestRateLimiterConcurrent(t *testing.T) {
	l, _, limited := newTestLimiter(0.01, 50)
	var wg sync.WaitGroup
	var admitted atomic.Int64
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				if l.take("anonymous", 1) == nil {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if admitted.Load() != 50 || testutil.ToFloat64(limited.WithLabelValues("anonymous")) != 150 {
		t.Errorf("admitted %d of 200, refused %v; want 50 and 150", admitted.Load(), testutil.ToFloat64(limited.WithLabelValues("anonymous")))
	}
}

// TestRateLimiterIdentitiesApart: one identity's debt does not touch
// another's bucket.
func TestRateLimiterIdentitiesApart(t *testing.T) {
	l, _, limited := newTestLimiter(0.01, 2)
	admit(t, l, "token:a", 2)
	if d := retryAfter(t, l, "token:a", 1); d != 100*time.Second {
		t.Fatalf("retry after %v, want 100s", d)
	}
	admit(t, l, "token:b", 1)
	admit(t, l, "token:b", 1)
	if got := testutil.ToFloat64(limited.WithLabelValues("token:b")); got != 0 {
		t.Errorf("limited{token:b} = %v", got)
	}
}

// TestRateLimiterDropsFullBuckets: the buckets of identities idle long
// enough to be full again are dropped at the next sweep, those still
// refilling are kept, and a dropped identity starts again from a full
// bucket, as it would have.
func TestRateLimiterDropsFullBuckets(t *testing.T) {
	l, clock, _ := newTestLimiter(1, 5)
	for i := range 1000 {
		admit(t, l, fmt.Sprintf("token:t%d", i), 1)
	}
	admit(t, l, "token:busy", 5)
	if n := l.buckets(); n != 1001 {
		t.Fatalf("%d buckets, want 1001", n)
	}
	// A sweep interval later every bucket is full (t* after 1s, busy after
	// 5s): the next take sweeps them all, then charges busy anew.
	clock.advance(sweepInterval)
	admit(t, l, "token:busy", 100)
	if n := l.buckets(); n != 1 {
		t.Fatalf("%d buckets after the sweep, want 1 (token:busy, in debt)", n)
	}
	clock.advance(sweepInterval - time.Second)
	admit(t, l, "token:t1", 1)
	if n := l.buckets(); n != 2 {
		t.Fatalf("%d buckets, want 2: no sweep before the interval", n)
	}
	retryAfter(t, l, "token:busy", 1) // 100 changes take 100s to pay
	for range 5 {
		admit(t, l, "token:t2", 1) // a new, full bucket
	}
	retryAfter(t, l, "token:t2", 1)
}

// TestRateLimitSettings: 0 is off; the burst defaults to the rate rounded
// up, at least 1.
func TestRateLimitSettings(t *testing.T) {
	if l := newRateLimiter(0, 5, nil, nil); l != nil {
		t.Errorf("rate 0: %v, want no limiter", l)
	}
	for _, tc := range []struct {
		rate float64
		want int
	}{{0, 0}, {0.01, 1}, {1, 1}, {2.5, 3}, {100, 100}} {
		if got := DefaultDDLBurst(tc.rate); got != tc.want {
			t.Errorf("DefaultDDLBurst(%v) = %d, want %d", tc.rate, got, tc.want)
		}
	}
	err := &RateLimitError{Identity: "token:ci", Rate: 0.5, Burst: 2, RetryAfter: 1234 * time.Millisecond}
	want := "execute: token:ci is over its rate of schema changes (ddl_rate_per_identity 0.5 per second, ddl_burst_per_identity 2); nothing was applied: retry after 1.3s"
	if err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
}

// TestExecuteRateLimitPerIdentity: on a member, an identity over its rate
// is refused before anything is checked or proposed (no raft entry, no
// results) while another identity is unaffected; a retry of an answered
// request is answered without being charged; dry runs and plans are not
// charged.
func TestExecuteRateLimitPerIdentity(t *testing.T) {
	reg := prometheus.NewRegistry()
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	m := startMember(t, func(c *Config) {
		c.DDLRatePerIdentity, c.DDLBurstPerIdentity, c.now, c.Registerer = 0.01, 2, clock.now, reg
		c.MetricsIdentityLabels = true
	})
	ctx := testContext(t)
	a := func(stmts string) Request {
		return Request{Statements: stmts, Principal: "token:a", RequestID: "a-" + stmts}
	}
	if _, err := m.Writes().Execute(ctx, a(writeKeyspace)); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, _, err := m.Writes().DryRun(ctx, a("CREATE TABLE shop.dry (id int PRIMARY KEY)")); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Writes().Plan(ctx, PlanRequest{Desired: writeKeyspace + "; CREATE TABLE shop.p (id int PRIMARY KEY)"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Writes().Execute(ctx, a("CREATE TABLE shop.t1 (id int PRIMARY KEY)")); err != nil {
		t.Fatal(err)
	}
	// The retry of an answered request gets its answer, uncharged.
	if out, err := m.Writes().Execute(ctx, a(writeKeyspace)); err != nil || len(out.Results) != 1 {
		t.Fatalf("retry: %+v, %v", out, err)
	}

	commit, epoch := m.core.node.Status().Commit, m.core.sm.Current().Epoch
	out, err := m.Writes().Execute(ctx, a("CREATE TABLE shop.t2 (id int PRIMARY KEY)"))
	var rl *RateLimitError
	if !errors.As(err, &rl) || kinds(err) != "[ErrRateLimited]" || rl.Identity != "token:a" || rl.RetryAfter != 100*time.Second ||
		!strings.Contains(err.Error(), "retry after 1m40s") {
		t.Fatalf("third change: %v, want a refusal with retry after 100s", err)
	}
	if len(out.Results) != 0 || m.core.node.Status().Commit != commit || m.core.sm.Current().Epoch != epoch {
		t.Fatalf("the refused request was proposed or answered results: %+v, commit %d -> %d", out, commit, m.core.node.Status().Commit)
	}
	if _, ok := m.core.sm.Current().Schema.Table("shop", "t2"); ok {
		t.Fatal("the refused table exists")
	}

	// Another identity has a bucket of its own.
	for i := range 2 {
		if _, err := m.Writes().Execute(ctx, Request{Statements: fmt.Sprintf("CREATE TABLE shop.b%d (id int PRIMARY KEY)", i), Principal: "token:b"}); err != nil {
			t.Fatalf("token:b change %d: %v", i, err)
		}
	}
	if got := testutil.ToFloat64(m.core.metrics.rateLimited.WithLabelValues("token:a")); got != 1 {
		t.Errorf("metalog_ddl_rate_limited_total{identity=token:a} = %v, want 1", got)
	}
	if n, err := testutil.GatherAndCount(reg, "metalog_ddl_rate_limited_total"); err != nil || n != 1 {
		t.Errorf("metalog_ddl_rate_limited_total series: %d, %v; want token:a's alone", n, err)
	}

	clock.advance(rl.RetryAfter)
	if _, err := m.Writes().Execute(ctx, a("CREATE TABLE shop.t2 (id int PRIMARY KEY)")); err != nil {
		t.Fatalf("after the retry-after: %v", err)
	}
}

// TestRateLimitedMetricNamesNoIdentityByDefault: without
// MetricsIdentityLabels, metalog_ddl_rate_limited_total is one series
// without labels, there at zero from the start, and a refusal counts in
// it without naming the identity; with it, the series is the identity's.
func TestRateLimitedMetricNamesNoIdentityByDefault(t *testing.T) {
	series := func(reg *prometheus.Registry) map[string]float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, mf := range mfs {
			if mf.GetName() != "metalog_ddl_rate_limited_total" {
				continue
			}
			for _, m := range mf.GetMetric() {
				var labels []string
				for _, l := range m.GetLabel() {
					labels = append(labels, l.GetName()+"="+l.GetValue())
				}
				out[strings.Join(labels, ",")] = m.GetCounter().GetValue()
			}
		}
		return out
	}
	for _, tc := range []struct {
		byIdentity    bool
		before, after map[string]float64
	}{
		{false, map[string]float64{"": 0}, map[string]float64{"": 1}},
		{true, map[string]float64{}, map[string]float64{"identity=token:secret-name": 1}},
	} {
		reg := prometheus.NewRegistry()
		m := newMetrics(reg, tc.byIdentity)
		if got := series(reg); !maps.Equal(got, tc.before) {
			t.Errorf("byIdentity %v: series before any refusal %v, want %v", tc.byIdentity, got, tc.before)
		}
		m.countRateLimited("token:secret-name")
		if got := series(reg); !maps.Equal(got, tc.after) {
			t.Errorf("byIdentity %v: series after a refusal %v, want %v", tc.byIdentity, got, tc.after)
		}
	}
}
