package systemschema

import (
	"crypto/md5"
	"fmt"
	"strings"
	"sync"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// SystemKeyspace is the name of the keyspace of system.local and
// system.peers.
const SystemKeyspace = "system"

// localStrategy is the replication class of Cassandra's own keyspaces,
// which live on each node alone.
const localStrategy = "org.apache.cassandra.locator.LocalStrategy"

// The tables of keyspace system that package cqlserver answers, with the
// columns SELECT * returns (not every column Cassandra keeps: those a
// driver reads). Their rows come from the member, not from a Scan.
var (
	// Local is system.local: this node.
	Local = &Table{Name: "local", Columns: []Column{
		pk("key"), col("bootstrapped", "text"), col("broadcast_address", "inet"), col("cluster_name", "text"),
		col("cql_version", "text"), col("data_center", "text"), col("host_id", "uuid"), col("listen_address", "inet"),
		col("native_protocol_version", "text"), col("partitioner", "text"), col("rack", "text"), col("release_version", "text"),
		col("rpc_address", "inet"), col("schema_version", "uuid"), col("tokens", "set<text>"),
	}}
	// Peers is system.peers: the other nodes, for drivers of protocol v4.
	Peers = &Table{Name: "peers", Columns: []Column{
		{Name: "peer", Type: "inet", Kind: PartitionKey}, col("data_center", "text"), col("host_id", "uuid"),
		col("preferred_ip", "inet"), col("rack", "text"), col("release_version", "text"), col("rpc_address", "inet"),
		col("schema_version", "uuid"), col("tokens", "set<text>"),
	}}
	// PeersV2 is system.peers_v2: the other nodes, with their ports.
	PeersV2 = &Table{Name: "peers_v2", Columns: []Column{
		{Name: "peer", Type: "inet", Kind: PartitionKey}, ck("peer_port", "int"), col("data_center", "text"),
		col("host_id", "uuid"), col("native_address", "inet"), col("native_port", "int"), col("preferred_ip", "inet"),
		col("preferred_port", "int"), col("rack", "text"), col("release_version", "text"), col("schema_version", "uuid"),
		col("tokens", "set<text>"),
	}}
)

// VirtualKeyspace is the keyspace in which Cassandra 4.0 and later list
// their virtual keyspaces and tables; drivers that see a 4.0 server read
// its three tables with every schema refresh (the Python driver's
// SchemaParserV4 does). metalog has no virtual tables: package cqlserver
// answers them with no rows.
const VirtualKeyspace = "system_virtual_schema"

// The tables of VirtualKeyspace, with Cassandra's columns.
var virtualTables = []*Table{
	{Name: "keyspaces", Columns: []Column{pk("keyspace_name")}},
	{Name: "tables", Columns: []Column{pk("keyspace_name"), ck("table_name", "text"), col("comment", "text")}},
	{Name: "columns", Columns: []Column{
		pk("keyspace_name"), ck("table_name", "text"), ck("column_name", "text"),
		col("clustering_order", "text"), col("column_name_bytes", "blob"), col("kind", "text"),
		col("position", "int"), col("type", "text"),
	}},
}

// LookupVirtual returns the table of VirtualKeyspace named name.
func LookupVirtual(name string) (*Table, bool) {
	for _, t := range virtualTables {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

// systemTables are the tables of keyspace system, by name.
var systemTables = []*Table{Local, Peers, PeersV2}

// Own returns the schema of the keyspaces Cassandra keeps for itself
// that metalog answers: system (Local, Peers, PeersV2) and system_schema
// (the tables All lists), each with LocalStrategy replication and its
// tables' ids as Cassandra derives them. Scan lists them beside the
// member's keyspaces, to every reader, as Cassandra does, so that a
// client that looks a table up in its driver's metadata before showing
// rows (cqlsh) finds the ones it selects. Built once.
var Own = sync.OnceValue(func() schema.Schema {
	s := schema.Schema{}
	for _, ks := range []struct {
		name   string
		tables []*Table
	}{{SystemKeyspace, systemTables}, {KeyspaceName, all}} {
		b := schema.NewBuilder(s)
		b.PutKeyspace(&schema.Keyspace{Name: ks.name, Replication: schema.Replication{Class: localStrategy}, DurableWrites: true})
		s = b.Schema()
		for i, t := range ks.tables {
			s = createOwn(s, ks.name, t, uint32(i))
		}
	}
	return s
})

// createOwn adds the table t of keyspace ks to s, panicking on an error:
// the declarations above are the only input.
func createOwn(s schema.Schema, ks string, t *Table, seq uint32) schema.Schema {
	parsed, err := cql.Parse(createStatement(ks, t))
	if err == nil && len(parsed) != 1 {
		err = fmt.Errorf("%d statements", len(parsed))
	}
	if err == nil {
		s, _, _, err = schema.Apply(s, parsed[0].Statement, schema.Env{Epoch: 1, Seq: seq})
	}
	if err != nil {
		panic(fmt.Sprintf("systemschema: the declaration of %s.%s: %v", ks, t.Name, err))
	}
	return s
}

// createStatement is the CREATE TABLE of t in keyspace ks, with the id
// Cassandra gives the table.
func createStatement(ks string, t *Table) string {
	var b, clustering strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s.%s (", ks, t.Name)
	partition := ""
	for _, c := range t.Columns {
		fmt.Fprintf(&b, "%s %s, ", c.Name, c.Type)
		switch c.Kind {
		case PartitionKey:
			partition = c.Name
		case Clustering:
			fmt.Fprintf(&clustering, ", %s", c.Name)
		}
	}
	fmt.Fprintf(&b, "PRIMARY KEY ((%s)%s)) WITH ID = %s", partition, clustering.String(), tableID(ks, t.Name))
	return b.String()
}

// tableID is the id Cassandra gives a table of its own keyspaces: the
// name-based (version 3, MD5) UUID of the keyspace and table names
// (TableId.forSystemTable).
func tableID(ks, table string) string {
	sum := md5.Sum([]byte(ks + table))
	sum[6] = sum[6]&0x0f | 0x30
	sum[8] = sum[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
}
