package cqlserver

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/metalog/metalog/cqlserver/internal/systemschema"
	"github.com/metalog/metalog/cqlserver/internal/wire"
)

// The values of system.local that do not depend on the member.
const (
	cqlVersion     = "3.4.7"
	releaseVersion = "4.0.0"
	partitioner    = "org.apache.cassandra.dht.Murmur3Partitioner"
	dataCenter     = "datacenter1"
	rack           = "rack1"
)

var (
	text = wire.Native(wire.TypeVarchar)
	// The columns of system.local, system.peers and system.peers_v2, as
	// systemschema declares them.
	localCol   = columnsOf(systemschema.Local)
	peersCol   = columnsOf(systemschema.Peers)
	peersV2Col = columnsOf(systemschema.PeersV2)
)

// HostID derives the host_id of a member from its raft id: a UUID of
// version 8 (custom) made of the id's SHA-256, stable across restarts
// and distinct between members.
func HostID(memberID uint64) [16]byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], memberID)
	sum := sha256.Sum256(append([]byte("metalog host id "), b[:]...))
	return uuidOf(sum)
}

// SchemaVersion is the schema_version of a schema with that digest: a
// UUID of version 8 made of its first bytes, the same on every member
// that holds the same schema, as drivers expect when they wait for
// agreement.
func SchemaVersion(digest [32]byte) [16]byte { return uuidOf(digest) }

func uuidOf(sum [32]byte) [16]byte {
	var u [16]byte
	copy(u[:], sum[:16])
	u[6] = u[6]&0x0f | 0x80 // version 8
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return u
}
