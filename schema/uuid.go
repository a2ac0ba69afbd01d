package schema

import (
	"crypto/sha256"
	"encoding/binary"
)

// uuidTag marks ids derived by TableID, so they cannot be mistaken for
// random (version 4) or time-based ids.
var uuidTag = [3]byte{'m', 'l', 'g'}

// TableID returns the id a table created at the given epoch got when its
// statement named none, before RulesClusterTableIDs (and still gets when
// the change names no cluster, see Env.tableID). seq numbers the tables created within one epoch
// (0 for the first). The id is a version 8 UUID: the epoch in its first 64
// bits around the version and variant bits, then "mlg", then seq, so ids are
// unique per (epoch, seq), sort by epoch, and are the same on every node.
func TableID(epoch uint64, seq uint32) UUID {
	var u UUID
	binary.BigEndian.PutUint32(u[0:4], uint32(epoch>>32))
	binary.BigEndian.PutUint16(u[4:6], uint16(epoch>>16))
	u[6] = 0x80 | byte(epoch>>12)&0x0f
	u[7] = byte(epoch >> 4)
	u[8] = 0x80 | byte(epoch)&0x0f
	copy(u[9:12], uuidTag[:])
	binary.BigEndian.PutUint32(u[12:16], seq)
	return u
}

// ClusterTableID returns the id a table created at the given epoch gets
// when its statement names none, under RulesClusterTableIDs: unique across
// clusters, as a time-based UUID is unique across the hosts that make them
// (the cluster stands for the host, the epoch for the time), and the same
// on every member of one cluster. cluster is the id of the cluster whose
// member proposed the change, carried in the log entry, so that every
// member derives the same id whatever its own cluster id is when it
// applies the entry; seq numbers the tables created within one epoch.
//
// The id is a version 8 UUID: the low 48 bits of the epoch first (the ids
// of one cluster sort by epoch), then 24 bits of seq around the version
// and variant bits, then 50 bits of a SHA-256 of the cluster id. Within
// one cluster's history (epoch, seq) is unique, so are its ids; tables of
// two clusters created at the same epoch get the same id only if the
// hashes of their cluster ids agree, one chance in 2^50. An epoch past
// 2^48 or a seq past 2^24, which no cluster reaches, still gives a
// deterministic id: the high bits go into the hash. The id depends on
// nothing else (not the proposer's clock), so that a dry run or a plan at
// epoch E predicts the ids, and the digest, of the change made at E+1.
func ClusterTableID(cluster uint64, epoch uint64, seq uint32) UUID {
	var in [24]byte
	binary.BigEndian.PutUint64(in[0:8], cluster)
	binary.BigEndian.PutUint64(in[8:16], epoch>>48)
	binary.BigEndian.PutUint64(in[16:24], uint64(seq>>24))
	sum := sha256.Sum256(in[:])
	var u UUID
	binary.BigEndian.PutUint16(u[0:2], uint16(epoch>>32))
	binary.BigEndian.PutUint32(u[2:6], uint32(epoch))
	u[6] = 0x80 | byte(seq>>20)&0x0f
	u[7] = byte(seq >> 12)
	u[8] = 0x80 | byte(seq>>6)&0x3f
	u[9] = byte(seq)<<2 | sum[0]&0x03
	copy(u[10:16], sum[1:7])
	return u
}

// tableID is the id of a table created under env whose statement names
// none: ClusterTableID under RulesClusterTableIDs when env names the
// cluster, TableID otherwise (entries logged by earlier releases, and
// schemas built outside a cluster, as the planner's), so that every entry
// gives the id it gave when it was first applied.
func (env Env) tableID() UUID {
	if env.Rules >= RulesClusterTableIDs && env.Cluster != 0 {
		return ClusterTableID(env.Cluster, env.Epoch, env.Seq)
	}
	return TableID(env.Epoch, env.Seq)
}

// UUID is a 16-byte id, such as a table's, held as its bytes (a third of
// its text). String formats it.
type UUID [16]byte

// String returns u as lowercase hyphenated UUID text.
func (u UUID) String() string { return formatUUID(u) }

// Bytes returns the 16 bytes of u in a new slice.
func (u UUID) Bytes() []byte { return u[:] }

const hexDigits = "0123456789abcdef"

// formatUUID returns u as lowercase hyphenated UUID text.
func formatUUID(u UUID) string {
	var b [36]byte
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j] = hexDigits[c>>4]
		b[j+1] = hexDigits[c&0x0f]
		j += 2
	}
	return string(b[:])
}

// ParseUUID parses hyphenated UUID text (either case).
func ParseUUID(s string) (UUID, bool) {
	var u UUID
	if len(s) != 36 {
		return u, false
	}
	j := 0
	for i := 0; i < 36; {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return u, false
			}
			i++
			continue
		}
		hi, ok1 := fromHex(s[i])
		lo, ok2 := fromHex(s[i+1])
		if !ok1 || !ok2 {
			return u, false
		}
		u[j] = hi<<4 | lo
		j++
		i += 2
	}
	return u, true
}

// fromHex returns the value of hex digit c (either case).
func fromHex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
