package integration

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
)

// TestReadmeClusterStatusExample: the `cluster status` output the README
// shows for its 3-node example has the ids of the members it names and
// the digest of the schema its two commands make.
func TestReadmeClusterStatusExample(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	md := &metadata.ClusterMetadata{Guardrails: guardrails.Defaults()}
	for i, stmt := range []string{
		"CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE shop.orders (id uuid PRIMARY KEY, total decimal)",
	} {
		if !strings.Contains(readme, stmt) {
			t.Fatalf("the README's example no longer runs %q: update this test with it", stmt)
		}
		if md, _, _, err = md.Apply(metadata.Command{Text: stmt}, uint64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	d := md.Schema.Digest()
	digest := fmt.Sprintf("%x", d[:])[:12]
	rows := regexp.MustCompile(`(?m)^(n[123]) +([0-9a-f]+) +\S+ +\S+ +voter .* (\d+) +([0-9a-f]{12})\s*$`).FindAllStringSubmatch(readme, -1)
	if len(rows) != 3 {
		t.Fatalf("found %d member rows of the example's cluster status in the README, want 3", len(rows))
	}
	for _, r := range rows {
		if id := member.FormatID(member.ID(r[1])); r[2] != id {
			t.Errorf("README shows %s with id %s, want %s", r[1], r[2], id)
		}
		if r[3] != "2" || r[4] != digest {
			t.Errorf("README shows %s at epoch %s with digest %s, want epoch 2 and digest %s", r[1], r[3], r[4], digest)
		}
	}
}
