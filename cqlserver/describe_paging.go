package cqlserver

import (
	"encoding/binary"
	"hash/crc32"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/metalog/metalog/cqlserver/internal/systemschema"
	"github.com/metalog/metalog/cqlserver/internal/wire"
)

// A DESCRIBE pages as Cassandra's DescribeStatement does: by row offset
// into the whole result, which each page computes again, with the schema
// version the first page was computed from; a page asked for after the
// schema changed is refused with Cassandra's message, and the client
// starts over. Its paging state, opaque to clients:
//
//	version byte (describePagingVersion, distinct from the SELECTs')
//	the schema version, 16 bytes
//	the offset of the next row, an unsigned varint
//	CRC-32C of the bytes before it and of the DESCRIBE text, 4 bytes
//	  big-endian, so that a state is taken back only with its own query
const describePagingVersion = 0x81

// errSchemaChangedWhilePaging is Cassandra's refusal of a DESCRIBE page
// whose schema is not the first page's.
const errSchemaChangedWhilePaging = "The schema has changed since the previous page of the DESCRIBE statement result. Please retry the DESCRIBE statement."

// pageDescribe cuts t to the page params ask for: the rows from the
// offset of its paging state on, at most its page size of them, and
// sets t.next when rows remain. version is the schema's.
func pageDescribe(t *table, text string, version [16]byte, params *wire.QueryParams) error {
	offset := uint64(0)
	if params.Has(wire.QueryPagingState) && len(params.PagingState) > 0 {
		var err error
		if offset, err = describeOffset(params.PagingState, text, version); err != nil {
			return err
		}
	}
	if offset > uint64(len(t.rows)) {
		offset = uint64(len(t.rows))
	}
	t.rows = t.rows[offset:]
	if !params.Has(wire.QueryPageSize) || params.PageSize <= 0 || len(t.rows) <= int(params.PageSize) {
		return nil
	}
	t.rows = t.rows[:params.PageSize]
	b := append([]byte{describePagingVersion}, version[:]...)
	b = binary.AppendUvarint(b, offset+uint64(params.PageSize))
	t.next = binary.BigEndian.AppendUint32(b, describeChecksum(b, text))
	return nil
}

// describeOffset reads the offset of a DESCRIBE paging state issued for
// text over the schema of that version.
func describeOffset(state []byte, text string, version [16]byte) (uint64, error) {
	bad := invalidf("paging state of %d bytes is not one this server issued for this DESCRIBE", len(state))
	if len(state) < 1+16+1+4 || state[0] != describePagingVersion {
		return 0, bad
	}
	body := state[:len(state)-4]
	if describeChecksum(body, text) != binary.BigEndian.Uint32(state[len(state)-4:]) {
		return 0, bad
	}
	offset, n := binary.Uvarint(body[17:])
	if n <= 0 || 17+n != len(body) {
		return 0, bad
	}
	if [16]byte(body[1:17]) != version {
		return 0, invalidf("%s", errSchemaChangedWhilePaging)
	}
	return offset, nil
}

// describeChecksum is the CRC-32C of a paging state's body and its query.
func describeChecksum(body []byte, text string) uint32 {
	return crc32.Update(crc32.Checksum(body, castagnoli), castagnoli, []byte(text))
}

// The columns of DESCRIBE CLUSTER; the range ownership only when the
// connection has a keyspace, as in Cassandra.
var (
	describeClusterColumns = []column{{"cluster", text}, {"partitioner", text}, {"snitch", text}}
	rangeOwnershipColumn   = column{"range_ownership", wire.MapOf(text, wire.ListOf(text))}
)

// describeCluster is the one row of DESCRIBE CLUSTER: the cluster name,
// the partitioner and the snitch (SimpleSnitch: one data center and rack,
// as system.local says), and, when the connection has a keyspace that is
// not a system one, the ring: the member's one token, owned by this
// address.
func (n nodeView) describeCluster(ks string) *table {
	t := &table{keyspace: "system", name: "describe", cols: describeClusterColumns}
	row := []any{n.srv.cfg.ClusterName, strings.TrimPrefix(partitioner, "org.apache.cassandra.dht."), "SimpleSnitch"}
	if ks != "" && ks != systemschema.SystemKeyspace && ks != systemschema.KeyspaceName && ks != systemschema.VirtualKeyspace {
		t.cols = append(slices.Clip(describeClusterColumns), rangeOwnershipColumn)
		endpoint := "/" + addrOf(n.local).String()
		if _, port, err := net.SplitHostPort(n.local.String()); err == nil {
			if _, err := strconv.Atoi(port); err == nil {
				endpoint += ":" + port
			}
		}
		row = append(row, map[string][]string{tokenOf(n.srv.cfg.HostID): {endpoint}})
	}
	t.rows = [][]any{row}
	return t
}
