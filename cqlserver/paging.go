package cqlserver

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/metalog/metalog/cqlserver/internal/systemschema"
)

// A paging state is the resume position of a paged system_schema SELECT,
// as the server hands it to the client with a page and takes it back with
// the request for the next one. Clients hold it as opaque bytes:
//
//	version byte (pagingVersion)
//	six strings, each an unsigned varint length and its bytes: the
//	  system_schema table, the query's keyspace_name and clustering
//	  restrictions (empty: none), and the keyspace, object and item of
//	  the position of the last row sent (systemschema.Position)
//	CRC-32C of all the bytes before it, 4 bytes big-endian
//
// The checksum catches damage, not forgery: a state that passes it only
// moves the resume position, never past what the query selects, since the
// server checks that the state was issued for the same table and
// restrictions. The next page is read from the schema of its own request,
// after the position: of the objects created or dropped between pages,
// those that sort after it show in or vanish from the next pages, those
// before it are not seen, as with Cassandra's paging.
const (
	// pagingVersion is the first byte of the states this server issues.
	pagingVersion = 1
	// maxPagingState bounds a paging state, issued or accepted, in bytes.
	maxPagingState = 16 << 10
	// pagingFields is the number of strings a paging state holds.
	pagingFields = 6
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// pagingState is a decoded paging state.
type pagingState struct {
	table          string // the system_schema table
	keyspace, name string // the query's restrictions, empty when none
	after          systemschema.Position
}

// fields are the paging state's strings, in their encoded order.
func (p *pagingState) fields() [pagingFields]*string {
	return [pagingFields]*string{&p.table, &p.keyspace, &p.name, &p.after.Keyspace, &p.after.Object, &p.after.Item}
}

// encode returns the paging state's bytes, or an error when they would
// be longer than maxPagingState.
func (p *pagingState) encode() ([]byte, error) {
	n := 1 + 4
	for _, s := range p.fields() {
		n += binary.MaxVarintLen32 + len(*s)
	}
	if n > maxPagingState {
		return nil, fmt.Errorf("the paging state of %s.%s after %q would take more than %d bytes",
			systemschema.KeyspaceName, p.table, p.after.Object, maxPagingState)
	}
	b := make([]byte, 0, n)
	b = append(b, pagingVersion)
	for _, s := range p.fields() {
		b = binary.AppendUvarint(b, uint64(len(*s)))
		b = append(b, *s...)
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// decodePagingState reads a paging state, refusing with INVALID any the
// server did not issue: the wrong size or version, a checksum that does
// not match, strings that overrun it or trailing bytes.
func decodePagingState(b []byte) (*pagingState, error) {
	bad := func(why string) error {
		return invalidf("paging state of %d bytes is not one this server issued (%s)", len(b), why)
	}
	switch {
	case len(b) < 1+pagingFields+4:
		return nil, bad("too short")
	case len(b) > maxPagingState:
		return nil, bad(fmt.Sprintf("longer than %d bytes", maxPagingState))
	case b[0] != pagingVersion:
		return nil, bad(fmt.Sprintf("version %d", b[0]))
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(b[len(b)-4:]) {
		return nil, bad("checksum mismatch")
	}
	p := &pagingState{}
	rest := body[1:]
	for _, s := range p.fields() {
		n, k := binary.Uvarint(rest)
		if k <= 0 || n > uint64(len(rest)-k) {
			return nil, bad("truncated")
		}
		*s = string(rest[k : k+int(n)])
		rest = rest[k+int(n):]
	}
	if len(rest) != 0 {
		return nil, bad("trailing bytes")
	}
	if p.after.IsZero() {
		return nil, bad("no position")
	}
	return p, nil
}

// resume checks that p was issued for the SELECT of table sys restricted
// by q's keyspace and name, and returns the position to resume after.
func (p *pagingState) resume(sys *systemschema.Table, q systemschema.Query) (systemschema.Position, error) {
	if p.table != sys.Name || p.keyspace != q.Keyspace || p.name != q.Name ||
		(q.Keyspace != "" && p.after.Keyspace != q.Keyspace) {
		return systemschema.Position{}, invalidf("paging state is not one this server issued for this query (it resumes a SELECT of %s.%s)",
			systemschema.KeyspaceName, p.table)
	}
	return p.after, nil
}
