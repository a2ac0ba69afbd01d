// Package cqlserver is a listener of Cassandra's CQL native protocol
// (versions 4 and 5) that serves a metalog member's schema: DDL statements
// go to the member's write path, and the reads drivers make when they
// connect and when they load a schema are answered from the member's
// current metadata.
//
// A Server reaches the member through two narrow interfaces, Writer and
// Reader, which *member.Writes and *member.Reads implement. Each accepted
// connection has one goroutine reading its frames and one writing its
// responses with their stream ids, as they are known: a DDL statement
// runs on a goroutine of its own, so that a slow write neither stops the
// reading nor holds the answers behind it (a driver's SELECTs after its
// DDL, while other DDL of the connection runs), and the answers ready
// together leave in one write. At most Config.MaxInFlight requests of a
// connection are pending at once (the reader waits for one to be
// answered beyond that). A frame longer than Config.MaxFrameBytes is answered with a
// protocol error and the connection closed.
//
// Served:
//   - OPTIONS, STARTUP (no authentication; lz4 on v4 frames and v5
//     segments; v5 switches to segments after READY), REGISTER;
//   - QUERY of DDL text, passed whole to Writer.Execute with the
//     connection's keyspace, answered with a SCHEMA_CHANGE result (VOID
//     when IF [NOT] EXISTS made it a no-op) and the guardrail warnings;
//     errors are classified by apierr.Classify and answered with the
//     Cassandra code of their class and the message the API gives;
//   - USE, which checks that the keyspace exists;
//   - the SELECTs drivers make: system.local (one row), system.peers and
//     system.peers_v2 (no rows: one member), and system_schema.<table>
//     restricted by keyspace_name and the table's first clustering column,
//     with a literal or a bind marker, a column list or *; as a QUERY or
//     through PREPARE and EXECUTE (drivers prepare every SELECT), the
//     prepared statements kept by the Server, at most 1024;
//   - paging of the system_schema SELECTs: a QUERY or EXECUTE with a page
//     size above 0 gets at most that many rows, with the has-more-pages
//     flag and a paging state while rows remain, and resumes after the
//     last row sent when it gives that state back (no page size: every
//     row in one page). A page is computed alone, O(log n + page), never
//     from the whole result. The state is opaque to clients: a version
//     byte, the table, the query's restrictions and the position of the
//     last row, and a CRC-32C, at most 16 KiB; one the server did not
//     issue, or issued for another query, is INVALID. Each page reads the
//     schema current when it is asked for, from the position on: objects
//     created or dropped between pages show or vanish as they sort after
//     or before it, as with Cassandra's paging. The system tables hold a
//     row or none and come in one page.
//   - events: the first REGISTER of a connection for SCHEMA_CHANGE starts
//     a goroutine that follows Reader.Watch from the member's epoch and
//     hands the connection's writer one EVENT (stream -1) per change of a
//     keyspace, table (a view is a table; an index or a trigger updates
//     its table), type, function or aggregate (with its argument types),
//     in the order of the epochs, after the REGISTER's READY; a resync of
//     the feed (it fell behind the history kept) is an UPDATED KEYSPACE
//     per keyspace. The writer takes them between responses; a connection
//     with more than 1024 events waiting is closed rather than buffered
//     without bound, and a feed that fails closes its connection, whose
//     driver reconnects and registers anew. The feed ends with its
//     connection, and Close waits for it. Every keyspace's events are
//     sent (no authentication yet). TOPOLOGY_CHANGE and STATUS_CHANGE are
//     accepted but send nothing (one member); another type is a protocol
//     error.
//   - DESCRIBE (or DESC) of KEYSPACES, KEYSPACE [ks], TABLES, TABLE, TYPES,
//     TYPE, FUNCTIONS, AGGREGATES, INDEX, MATERIALIZED VIEW and SCHEMA, as
//     Cassandra 4.0 answers cqlsh: rows of keyspace_name, type, name and
//     create_statement (the statement package describe prints, so the text
//     is that of metalog describe), all in one page; unqualified names are
//     in the connection's keyspace; a missing object is INVALID, and so
//     is another form (DESCRIBE CLUSTER among them).
//
// Not served yet: PREPARE of
// anything but those SELECTs, BATCH (answered with an error), any other
// SELECT and the data statements (INVALID), authentication, topology and
// status events, and Cassandra's own keyspaces in system_schema.
// Guardrail warnings ride in the frame's warnings; an unavailable member is UNAVAILABLE, a rate
// limit or the NOSPACE alarm OVERLOADED, a write whose outcome is unknown
// WRITE_TIMEOUT.
//
//	srv := cqlserver.New(cqlserver.Config{Writer: m.Writes(), Reader: m.Reads(), HostID: cqlserver.HostID(m.ID())})
//	go srv.Serve(lis)
//	defer srv.Close()
package cqlserver
