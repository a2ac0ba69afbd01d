// Package cqlserver is a listener of Cassandra's CQL native protocol
// (versions 4 and 5) that serves a metalog member's schema: DDL statements
// go to the member's write path, and the reads drivers make when they
// connect and when they load a schema are answered from the member's
// current metadata.
//
// A Server reaches the member through two narrow interfaces, Writer and
// Reader, which *member.Writes and *member.Reads implement (and an
// optional third, Membership, for the node events). Each accepted
// connection has one goroutine reading its frames and one writing its
// responses with their stream ids, as they are known: a DDL statement
// runs on a goroutine of its own, so that a slow write neither stops the
// reading nor holds the answers behind it (a driver's SELECTs after its
// DDL, while other DDL of the connection runs), and the answers ready
// together leave in one write. At most Config.MaxInFlight requests of a
// connection are pending at once (the reader waits for one to be
// answered beyond that). A frame longer than Config.MaxFrameBytes is
// answered with a protocol error and the connection closed; so is a
// frame of another protocol version, with the versions spoken, in a
// header of the client's version when it is older (a v1 or v2 header
// has its own layout), so that the driver can read why.
//
// Served:
//   - OPTIONS, STARTUP (lz4 on v4 frames and v5 segments; v5 switches to
//     segments after READY or AUTHENTICATE), REGISTER;
//   - authentication, when Config.Authenticator is set (package server
//     sets it when authentication is on): a client certificate that
//     identifies a client holding a role is answered READY; otherwise
//     STARTUP is answered AUTHENTICATE (PasswordAuthenticator), and the
//     password of the client's SASL PLAIN AUTH_RESPONSE is a bearer
//     token (the username is only logged). A refused token is an
//     authentication error, and the client may try again; any other
//     request before AUTH_SUCCESS is a protocol error that closes the
//     connection. The principal's grants then hold as on the API: DDL
//     needs ddl and each statement's keyspace must be covered (the
//     member checks it and the history records the principal), and the
//     keyspaces its reader grants do not cover do not exist for the
//     connection: not in system_schema, DESCRIBE, USE or the events;
//   - QUERY of DDL text, passed whole to Writer.Execute with the
//     connection's keyspace, answered with a SCHEMA_CHANGE result (VOID
//     when IF [NOT] EXISTS made it a no-op) and the guardrail warnings;
//     errors are classified by apierr.Classify and answered with the
//     Cassandra code of their class and the message the API gives;
//   - USE, which checks that the keyspace exists;
//   - the SELECTs drivers make: system.local (one row), system.peers and
//     system.peers_v2 (a row per other member serving CQL, from
//     Config.Membership's BriefMembersAt at this member's epoch, so that
//     each schema_version is that member's once it has applied this
//     one's changes), system_virtual_schema's
//     keyspaces, tables and columns (Cassandra's columns, no rows: no
//     virtual keyspaces; drivers read them from a 4.0 server with each
//     schema refresh), and system_schema.<table>
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
//     connection, and Close waits for it. The feed holds the keyspaces
//     the connection may read. TOPOLOGY_CHANGE and STATUS_CHANGE
//     come from one goroutine per Server, which asks Config.Membership
//     (*member.Cluster) for the members every Config.MembershipInterval
//     and compares with its last answer: a member that answers with a CQL
//     address for the first time is a NEW_NODE, one gone from the
//     configuration a REMOVED_NODE, one that stops answering DOWN and
//     answers again UP, a member whose CQL address changed a removal and
//     an addition; removals first, then additions, then status changes,
//     each by member id. The address is CQLInet's (the member's peer host
//     when its CQL listener binds every interface); this member and
//     members without CQL are never named. The events go to the queues of
//     the connections registered for their type, without waiting: a full
//     queue closes its connection, as above. Another type is a protocol
//     error.
//   - DESCRIBE (or DESC), every form of Cassandra 4.0's grammar: [FULL]
//     SCHEMA, KEYSPACES, [ONLY] KEYSPACE [ks], TABLES, TABLE, INDEX,
//     MATERIALIZED VIEW, TYPES, TYPE, FUNCTIONS, FUNCTION, AGGREGATES,
//     AGGREGATE, CLUSTER and DESCRIBE name (a keyspace, table, index or
//     view, resolved in that order), WITH INTERNALS (the table ids), as a
//     QUERY or prepared; the rows of Cassandra's DescribeStatement
//     (keyspace_name, type, name, and create_statement for the forms that
//     print statements, names quoted as CQL needs, sorted by name ignoring
//     case), the statements those package describe prints (a table's
//     triggers follow its CREATE TABLE); paged by row offset with the
//     schema version, as Cassandra pages it; Cassandra's INVALID messages
//     for a missing object and SYNTAX_ERROR for a form it does not parse.
//
// A connection with no request pending for Config.IdleTimeout is closed,
// unless it registered for events (a control connection waits for them
// in silence). Shutdown drains: it stops accepting and reading, answers
// the requests in flight, closes each connection once it has, and closes
// the rest when its context ends; Close cuts at once.
//
// Not served: PREPARE of anything but those SELECTs and DESCRIBE, BATCH
// (answered with an error), any other SELECT and the data statements
// (INVALID). system_schema lists Cassandra's
// own keyspaces system and system_schema beside the member's (the tables
// metalog answers, to every reader), as Cassandra does: cqlsh looks a
// selected table up in its driver's metadata.
// Guardrail warnings ride in the frame's warnings; an unavailable member is UNAVAILABLE, a rate
// limit or the NOSPACE alarm OVERLOADED, a write whose outcome is unknown
// WRITE_TIMEOUT.
//
//	srv := cqlserver.New(cqlserver.Config{Writer: m.Writes(), Reader: m.Reads(), HostID: cqlserver.HostID(m.ID())})
//	go srv.Serve(lis)
//	defer srv.Close()
package cqlserver
