package member

import (
	"reflect"
	"testing"
)

// TestPeerMemberRoundTrip checks that a status NodeStatus answers comes
// back whole, the client listeners (CQL among them) included.
func TestPeerMemberRoundTrip(t *testing.T) {
	s := &MemberStatus{
		ID: "a1", Name: "n1", PeerAddr: "10.0.0.1:7000", GRPCAddr: "10.0.0.1:7070", HTTPAddr: "10.0.0.1:7080",
		CQLAddr: "10.0.0.1:9042", Role: "voter", Leader: true, Reachable: true, Term: 3, CommitIndex: 9,
		AppliedIndex: 8, Epoch: 4, Digest: "ab", Alarms: []string{"NOSPACE"}, ClusterID: "c", KnownLeader: "a1",
		History:       []EpochDigest{{Epoch: 4, Digest: "ab"}},
		Configuration: []ConfigMember{{ID: "a1", Name: "n1", Role: "voter", PeerAddr: "10.0.0.1:7000"}},
	}
	if got := fromPeerMember(toPeerMember(s)); !reflect.DeepEqual(got, s) {
		t.Errorf("round trip:\n%+v\nwant\n%+v", got, s)
	}
}
