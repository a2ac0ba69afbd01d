package member

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/metalog/metalog/metadata"
)

// TestDryRunAnswersWhatExecuteWould runs each request as a dry run and
// then for real, on the same member in the same state: the dry run changes
// nothing (epoch, digest, history), and answers the same results,
// warnings and epochs, or the same error and code, as the real one; the
// digest it names is the one the real request makes.
func TestDryRunAnswersWhatExecuteWould(t *testing.T) {
	m := startMember(t, nil)
	ctx := testContext(t)
	if _, _, err := m.Writes().SetGuardrails(ctx, "test", "", map[string]string{"tables_warn_threshold": "2"}); err != nil {
		t.Fatal(err)
	}
	var warned, refused int
	for i, req := range []Request{
		{Statements: "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"},
		{Statements: "CREATE TABLE shop.a (id int PRIMARY KEY); CREATE TABLE shop.b (id int PRIMARY KEY, v text)"},
		{Statements: "CREATE TABLE shop.c (id int PRIMARY KEY)", RequestID: "warns"}, // past tables_warn_threshold
		{Statements: "CREATE TABLE IF NOT EXISTS shop.a (id int PRIMARY KEY); ALTER TABLE shop.b ADD w int", Atomic: true},
		{Statements: "CREATE TABLE shop.d (id int PRIMARY KEY); CREATE TABLE shop.a (id int PRIMARY KEY)"},
		{Statements: "CREATE TABLE shop.e (id int PRIMARY KEY", RequestID: "syntax"},
		{Statements: "DROP TABLE shop.b", HasIfEpoch: true, IfEpoch: 1},
		{Statements: "CREATE TABLE shop.c (id int PRIMARY KEY)", RequestID: "warns"}, // a retry: the first result
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			before := m.core.sm.Current()
			history := len(m.core.sm.RecentDigests())
			dry, digest, dryErr := m.Writes().DryRun(ctx, req)
			if cur := m.core.sm.Current(); cur.Epoch != before.Epoch || cur.Schema.Digest() != before.Schema.Digest() || len(m.core.sm.RecentDigests()) != history {
				t.Fatalf("the dry run changed the member: epoch %d -> %d", before.Epoch, cur.Epoch)
			}
			real, realErr := m.Writes().Execute(ctx, req)
			if fmt.Sprint(dryErr) != fmt.Sprint(realErr) || kinds(dryErr) != kinds(realErr) {
				t.Fatalf("dry run error %v (%v), real %v (%v)", dryErr, kinds(dryErr), realErr, kinds(realErr))
			}
			if realErr != nil {
				refused++
				return
			}
			if len(real.Warnings) > 0 {
				warned++
			}
			if diff := cmp.Diff(real, dry); diff != "" {
				t.Errorf("dry run outcome differs from the real one (-real +dry):\n%s", diff)
			}
			if got := m.core.sm.Current().Schema.Digest(); digest != got {
				t.Errorf("dry run digest %x, the real request made %x", digest[:4], got[:4])
			}
		})
	}
	if warned != 2 || refused != 3 {
		t.Errorf("%d requests warned and %d were refused, want 2 and 3: the cases no longer cover warnings and errors", warned, refused)
	}
}

// TestScopedDryRunDigestIsTheCallersView: a dry run by a caller who sees
// some keyspaces only (Request.Visible) answers the digest of those
// keyspaces after the change, the one a read of that view gives once the
// change is made, not the whole cluster's; a retry of an answered request
// too.
func TestScopedDryRunDigestIsTheCallersView(t *testing.T) {
	m := startMember(t, nil)
	ctx := testContext(t)
	if _, err := m.Writes().Execute(ctx, Request{Statements: writeKeyspace + "; CREATE KEYSPACE other WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; CREATE TABLE other.t (id int PRIMARY KEY)"}); err != nil {
		t.Fatal(err)
	}
	shop := func(ks string) bool { return ks == "shop" }
	req := Request{Statements: "CREATE TABLE shop.t (id int PRIMARY KEY)", RequestID: "scoped", Visible: shop}
	_, dry, err := m.Writes().DryRun(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Writes().Execute(ctx, req); err != nil {
		t.Fatal(err)
	}
	view, err := m.Reads().Read(ctx, 0, Linearizable, shop)
	if err != nil {
		t.Fatal(err)
	}
	scoped, whole := view.Schema.Digest(), m.core.sm.Current().Schema.Digest()
	if dry != scoped || dry == whole {
		t.Fatalf("scoped dry run digest %x, the scoped view's %x, the whole cluster's %x: want the scoped view's", dry[:4], scoped[:4], whole[:4])
	}
	if _, again, err := m.Writes().DryRun(ctx, req); err != nil || again != dry {
		t.Fatalf("dry run of the answered request: %x, %v; want the scoped digest %x", again[:4], err, dry[:4])
	}
}

// TestIfEpochLetsOneOfTwoConcurrentAppliesLand: two atomic requests made
// at the same epoch, sent at once through two members: exactly one
// applies, the other is refused with FailedPrecondition naming both epochs
// and none of its tables exists on any member.
func TestIfEpochLetsOneOfTwoConcurrentAppliesLand(t *testing.T) {
	c := startTestCluster(t, 3)
	leader := c.waitLeader(0, 1, 2)
	if _, err := c.exec(leader, 10*time.Second, "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}"); err != nil {
		t.Fatal(err)
	}
	epoch := c.waitSameSchema()
	var wg sync.WaitGroup
	outs := make([]metadata.Outcome, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			outs[i], errs[i] = c.members[i].Writes().Execute(ctx, Request{Atomic: true, HasIfEpoch: true, IfEpoch: epoch,
				Statements: fmt.Sprintf("CREATE TABLE shop.from%d_a (id int PRIMARY KEY); CREATE TABLE shop.from%d_b (id int PRIMARY KEY)", i, i)})
		}()
	}
	wg.Wait()
	won, lost := 0, 1
	if errs[0] != nil {
		won, lost = 1, 0
	}
	if errs[won] != nil || errs[lost] == nil {
		t.Fatalf("want exactly one to land: errors %v and %v", errs[0], errs[1])
	}
	var moved *metadata.EpochMovedError
	if !errors.Is(errs[lost], metadata.ErrEpochMoved) || !errors.As(errs[lost], &moved) || invalid(errs[lost]) {
		t.Fatalf("the other: %v (%v), want an *EpochMovedError", errs[lost], kinds(errs[lost]))
	}
	if outs[won].Epoch != epoch+1 {
		t.Errorf("the request that landed is at epoch %d, want %d", outs[won].Epoch, epoch+1)
	}
	c.waitSameSchema()
	for _, mb := range c.members {
		for _, name := range []string{"a", "b"} {
			if _, ok := mb.core.sm.Current().Schema.Table("shop", fmt.Sprintf("from%d_%s", lost, name)); ok {
				t.Errorf("%s has shop.from%d_%s of the refused request", mb.Name(), lost, name)
			}
			if _, ok := mb.core.sm.Current().Schema.Table("shop", fmt.Sprintf("from%d_%s", won, name)); !ok {
				t.Errorf("%s lacks shop.from%d_%s of the request that landed", mb.Name(), won, name)
			}
		}
	}
	t.Logf("landed: %v; refused: %v", outs[won].Epoch, errs[lost])
}
