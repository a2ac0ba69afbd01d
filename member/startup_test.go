package member

import "testing"

// TestClusterIDOfFoundingMembers: every founding member computes the same
// id from the same --initial-cluster, whatever the order; other members
// or addresses give another id.
func TestClusterIDOfFoundingMembers(t *testing.T) {
	a := []InitialMember{{"n1", "10.0.0.1:7071"}, {"n2", "10.0.0.2:7071"}, {"n3", "10.0.0.3:7071"}}
	b := []InitialMember{a[2], a[0], a[1]}
	if clusterIDOf(a) != clusterIDOf(b) || clusterIDOf(a) == 0 {
		t.Fatalf("order changes the id: %x %x", clusterIDOf(a), clusterIDOf(b))
	}
	other := []InitialMember{a[0], a[1], {"n3", "10.0.0.9:7071"}}
	if clusterIDOf(a) == clusterIDOf(other) || clusterIDOf(a) == clusterIDOf(a[:2]) {
		t.Fatal("different founding members share an id")
	}
}
