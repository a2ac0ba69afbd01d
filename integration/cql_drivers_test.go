package integration

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// gocqlSession connects gocql (protocol v4, one connection a host,
// bounded waits) to the CQL listener at addr, with filter, if not nil,
// choosing the hosts it uses and observe, if not nil, told of every
// query; it is closed when the test ends.
func gocqlSession(t *testing.T, addr string, filter func(*gocql.HostInfo) bool, observe func(gocql.ObservedQuery)) *gocql.Session {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	cluster := gocql.NewCluster(host)
	if cluster.Port, err = strconv.Atoi(port); err != nil {
		t.Fatal(err)
	}
	cluster.ProtoVersion = 4
	cluster.Timeout, cluster.ConnectTimeout = 10*time.Second, 10*time.Second
	cluster.NumConns = 1
	if filter != nil {
		cluster.HostFilter = gocql.HostFilterFunc(filter)
	}
	if observe != nil {
		cluster.QueryObserver = queryObserver(observe)
	}
	session, err := cluster.CreateSession()
	if err != nil {
		t.Fatalf("gocql session at %s: %v", addr, err)
	}
	t.Cleanup(session.Close)
	return session
}

// queryObserver is a gocql.QueryObserver made of a function.
type queryObserver func(gocql.ObservedQuery)

func (f queryObserver) ObserveQuery(_ context.Context, q gocql.ObservedQuery) { f(q) }

// TestGocqlDiscoversTheClusterFromOneContactPoint: a driver given one
// member's CQL address finds the other two through system.peers(_v2),
// with their CQL addresses, and DDL sent through each member (a session
// held to it) is applied by the cluster: every member then has it, and
// the first session's metadata shows it.
func TestGocqlDiscoversTheClusterFromOneContactPoint(t *testing.T) {
	c := newCluster(t, 3)
	var want []string
	for _, s := range c.servers {
		want = append(want, s.cqlAddr)
	}
	sort.Strings(want)

	// The members learn each other's CQL addresses from their status
	// exchanges: wait until the contact point lists its two peers, so
	// that the driver's one look at system.peers at connect sees them.
	probe := gocqlSession(t, c.servers[0].cqlAddr, nil, nil)
	waitFor(t, 20*time.Second, "system.peers to list the two other members", func() error {
		n, err := countRows(probe, "SELECT * FROM system.peers")
		if err == nil && n != 2 {
			err = fmt.Errorf("%d rows", n)
		}
		return err
	})
	probe.Close()

	var mu sync.Mutex // guards seen
	seen := map[string]string{}
	session := gocqlSession(t, c.servers[0].cqlAddr, func(h *gocql.HostInfo) bool {
		mu.Lock()
		defer mu.Unlock()
		seen[h.ConnectAddressAndPort()] = h.HostID()
		return true
	}, nil)
	waitFor(t, 20*time.Second, "the driver to know the three members", func() error {
		mu.Lock()
		defer mu.Unlock()
		got := mapKeys(seen)
		if !slices.Equal(got, want) {
			return fmt.Errorf("the driver knows the hosts %v, want %v", got, want)
		}
		ids := map[string]bool{}
		for _, id := range seen {
			ids[id] = true
		}
		if len(ids) != 3 || ids[""] {
			return fmt.Errorf("host ids %v, want three", seen)
		}
		return nil
	})

	if err := session.Query(`CREATE KEYSPACE spread WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`).Exec(); err != nil {
		t.Fatal(err)
	}
	for i, s := range c.servers {
		ran := make(chan string, 8)
		one := gocqlSession(t, s.cqlAddr, func(h *gocql.HostInfo) bool { return h.ConnectAddressAndPort() == s.cqlAddr },
			func(q gocql.ObservedQuery) {
				if strings.HasPrefix(q.Statement, "CREATE TABLE") && q.Host != nil {
					ran <- q.Host.ConnectAddressAndPort()
				}
			})
		stmt := fmt.Sprintf("CREATE TABLE spread.t%d (id int PRIMARY KEY, v text)", i+1)
		if err := one.Query(stmt).Exec(); err != nil {
			t.Fatalf("%s through %s: %v", stmt, c.names[i], err)
		}
		if host := <-ran; host != s.cqlAddr {
			t.Errorf("%s ran on %s, want %s (%s)", stmt, host, s.cqlAddr, c.names[i])
		}
	}
	tables := []string{"t1", "t2", "t3"}
	for i, s := range c.servers {
		waitFor(t, 20*time.Second, c.names[i]+" to have the three tables", func() error {
			got, err := s.client().GetKeyspace(context.Background(), &pb.GetKeyspaceRequest{Keyspace: "spread"})
			if err != nil {
				return err
			}
			var names []string
			for _, tb := range got.GetKeyspace().GetTables() {
				names = append(names, tb.GetName())
			}
			if !slices.Equal(names, tables) {
				return fmt.Errorf("tables %v, want %v", names, tables)
			}
			return nil
		})
	}
	waitFor(t, 20*time.Second, "the first session's metadata to show the three tables", func() error {
		ks, err := session.KeyspaceMetadata("spread")
		if err != nil {
			return err
		}
		if got := mapKeys(ks.Tables); !slices.Equal(got, tables) {
			return fmt.Errorf("tables %v, want %v", got, tables)
		}
		return nil
	})
}

// countRows returns how many rows stmt returns.
func countRows(session *gocql.Session, stmt string) (int, error) {
	sc, n := session.Query(stmt).Iter().Scanner(), 0
	for sc.Next() {
		n++
	}
	return n, sc.Err()
}

// TestGocqlMetadataFollowsTheCLI: changes made with `metalog exec` (the
// gRPC side) reach a connected driver's metadata: gocql caches a
// keyspace's metadata once read and reads it again only when a
// SCHEMA_CHANGE event for it arrives, so each change shows only through
// an event.
func TestGocqlMetadataFollowsTheCLI(t *testing.T) {
	s := newServer(t)
	s.start()
	s.mustCLI(0, "exec", "-e", "CREATE KEYSPACE ev WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; CREATE TABLE ev.first (id int PRIMARY KEY)")
	session := gocqlSession(t, s.cqlAddr, nil, nil)
	ks, err := session.KeyspaceMetadata("ev")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ks.Tables["first"]; !ok || len(ks.Tables) != 1 {
		t.Fatalf("tables of ev: %v, want first", mapKeys(ks.Tables))
	}
	for _, step := range []struct {
		stmt, what string
		shows      func(*gocql.KeyspaceMetadata) bool
	}{
		{"CREATE TABLE ev.second (id int PRIMARY KEY, v text)", "table second", func(ks *gocql.KeyspaceMetadata) bool {
			return ks.Tables["second"] != nil
		}},
		{"ALTER TABLE ev.second ADD w bigint", "column second.w", func(ks *gocql.KeyspaceMetadata) bool {
			return ks.Tables["second"] != nil && ks.Tables["second"].Columns["w"] != nil
		}},
		{"CREATE TYPE ev.pair (a int, b text)", "type pair", func(ks *gocql.KeyspaceMetadata) bool {
			return ks.UserTypes["pair"] != nil
		}},
		{"DROP TABLE ev.first", "table first gone", func(ks *gocql.KeyspaceMetadata) bool {
			return ks.Tables["first"] == nil
		}},
	} {
		s.mustCLI(0, "exec", "-e", step.stmt)
		waitFor(t, 20*time.Second, "the driver's metadata to show "+step.what, func() error {
			ks, err := session.KeyspaceMetadata("ev")
			if err != nil {
				return err
			}
			if !step.shows(ks) {
				return fmt.Errorf("after %q: tables %v, types %v", step.stmt, mapKeys(ks.Tables), mapKeys(ks.UserTypes))
			}
			return nil
		})
	}
}

// mapKeys returns m's keys, sorted.
func mapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// driverSchema is the schema of TestGocqlMetadataMatchesTheAPI: tables
// with composite partition keys, clustering columns in both orders,
// static columns, collections, tuples and a user type, and indexes.
const driverSchema = `CREATE KEYSPACE app WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TYPE app.address (street text, city text, zip int, tags set<text>);
CREATE TABLE app.users (id uuid PRIMARY KEY, name text, home frozen<address>, emails set<text>, prefs map<text, int>);
CREATE TABLE app.events (tenant text, day date, at timestamp, seq int, kind text, payload blob, owner text STATIC, PRIMARY KEY ((tenant, day), at, seq)) WITH CLUSTERING ORDER BY (at DESC, seq ASC);
CREATE TABLE app.lists (k int, c1 text, c2 int, s int STATIC, v list<frozen<address>>, t tuple<int, text>, PRIMARY KEY (k, c1, c2)) WITH CLUSTERING ORDER BY (c1 DESC, c2 DESC);
CREATE TABLE app.hits (id int, bucket int, n counter, PRIMARY KEY (id, bucket));
CREATE INDEX events_kind ON app.events (kind);
CREATE INDEX users_prefs_keys ON app.users (KEYS(prefs));
CREATE INDEX ON app.users (emails);
`

// TestGocqlMetadataMatchesTheAPI: what gocql reads of a keyspace
// (KeyspaceMetadata: tables, columns and their types and kinds,
// partition and clustering keys in order with their order, user types;
// and, since gocql keeps none, the indexes as system_schema.indexes
// gives them) is the keyspace the gRPC API returns, field by field. The
// CLI prints it as CQL only (describe), so the structured side is the
// API's GetKeyspace, which describe formats; describe is checked to name
// every object too.
func TestGocqlMetadataMatchesTheAPI(t *testing.T) {
	s := newServer(t)
	s.start()
	file := filepath.Join(t.TempDir(), "app.cql")
	if err := os.WriteFile(file, []byte(driverSchema), 0o600); err != nil {
		t.Fatal(err)
	}
	s.mustCLI(0, "exec", "--atomic", "-f", file)
	resp, err := s.client().GetKeyspace(context.Background(), &pb.GetKeyspaceRequest{Keyspace: "app"})
	if err != nil {
		t.Fatal(err)
	}
	want := resp.GetKeyspace()
	if len(want.GetTables()) != 4 || len(want.GetTypes()) != 1 || len(want.GetIndexes()) != 3 {
		t.Fatalf("the API's keyspace has %d tables, %d types, %d indexes, want 4, 1, 3", len(want.GetTables()), len(want.GetTypes()), len(want.GetIndexes()))
	}
	described := s.mustCLI(0, "describe", "app")
	session := gocqlSession(t, s.cqlAddr, nil, nil)
	got, err := session.KeyspaceMetadata("app")
	if err != nil {
		t.Fatal(err)
	}
	if got.StrategyClass != want.GetReplicationClass() || fmt.Sprint(got.StrategyOptions["replication_factor"]) != want.GetReplication()["replication_factor"] ||
		got.DurableWrites != want.GetDurableWrites() {
		t.Errorf("keyspace: gocql %s %v durable %v, API %s %v durable %v", got.StrategyClass, got.StrategyOptions, got.DurableWrites,
			want.GetReplicationClass(), want.GetReplication(), want.GetDurableWrites())
	}
	var tables []string
	for _, tb := range want.GetTables() {
		tables = append(tables, tb.GetName())
		if !strings.Contains(described, "CREATE TABLE app."+tb.GetName()+" (") {
			t.Errorf("describe app does not create the table %s:\n%s", tb.GetName(), described)
		}
		if gt := got.Tables[tb.GetName()]; gt == nil {
			t.Errorf("gocql has no table %s", tb.GetName())
		} else {
			compareDriverTable(t, gt, tb)
		}
	}
	if names := mapKeys(got.Tables); !slices.Equal(names, tables) {
		t.Errorf("gocql's tables %v, the API's %v", names, tables)
	}
	compareDriverTypes(t, got, want, described)
	compareDriverIndexes(t, session, want, described)
}

// compareDriverTable compares one table as gocql read it with the API's.
func compareDriverTable(t *testing.T, gt *gocql.TableMetadata, tb *pb.Table) {
	t.Helper()
	kinds := map[string]gocql.ColumnKind{"partition_key": gocql.ColumnPartitionKey, "clustering": gocql.ColumnClusteringKey,
		"regular": gocql.ColumnRegular, "static": gocql.ColumnStatic}
	var names []string
	for _, c := range tb.GetColumns() {
		names = append(names, c.GetName())
		gc := gt.Columns[c.GetName()]
		if gc == nil {
			t.Errorf("%s: gocql has no column %s", tb.GetName(), c.GetName())
			continue
		}
		if gc.Validator != c.GetType() {
			t.Errorf("%s.%s: gocql type %q, API type %q", tb.GetName(), c.GetName(), gc.Validator, c.GetType())
		}
		if k, ok := kinds[c.GetKind()]; !ok || gc.Kind != k {
			t.Errorf("%s.%s: gocql kind %v, API kind %q", tb.GetName(), c.GetName(), gc.Kind, c.GetKind())
		}
	}
	if got := mapKeys(gt.Columns); !slices.Equal(got, slices.Sorted(slices.Values(names))) {
		t.Errorf("%s: gocql's columns %v, the API's %v", tb.GetName(), got, names)
	}
	var pk []string
	for _, c := range gt.PartitionKey {
		pk = append(pk, c.Name)
	}
	if !slices.Equal(pk, tb.GetPartitionKey()) {
		t.Errorf("%s: gocql's partition key %v, the API's %v", tb.GetName(), pk, tb.GetPartitionKey())
	}
	var ck, wantCK []string
	for _, c := range gt.ClusteringColumns {
		order := "ASC"
		if c.Order == gocql.DESC {
			order = "DESC"
		}
		if c.ClusteringOrder != strings.ToLower(order) {
			t.Errorf("%s.%s: clustering_order %q, order %s", tb.GetName(), c.Name, c.ClusteringOrder, order)
		}
		ck = append(ck, c.Name+" "+order)
	}
	for _, c := range tb.GetClustering() {
		wantCK = append(wantCK, c.GetName()+" "+c.GetOrder())
	}
	if !slices.Equal(ck, wantCK) {
		t.Errorf("%s: gocql's clustering %v, the API's %v", tb.GetName(), ck, wantCK)
	}
}

// compareDriverTypes compares the user types gocql read with the API's.
func compareDriverTypes(t *testing.T, got *gocql.KeyspaceMetadata, want *pb.Keyspace, described string) {
	t.Helper()
	var names []string
	for _, ut := range want.GetTypes() {
		names = append(names, ut.GetName())
		if !strings.Contains(described, "CREATE TYPE app."+ut.GetName()+" (") {
			t.Errorf("describe app does not create the type %s", ut.GetName())
		}
		gt := got.UserTypes[ut.GetName()]
		if gt == nil {
			t.Errorf("gocql has no type %s", ut.GetName())
			continue
		}
		var fields, types, wantFields, wantTypes []string
		for i, f := range gt.FieldNames {
			fields = append(fields, f)
			types = append(types, gocqlTypeText(gt.FieldTypes[i]))
		}
		for _, f := range ut.GetFields() {
			wantFields = append(wantFields, f.GetName())
			wantTypes = append(wantTypes, driverType(f.GetType()))
		}
		if !slices.Equal(fields, wantFields) || !slices.Equal(types, wantTypes) {
			t.Errorf("type %s: gocql fields %v %v, the API's %v %v", ut.GetName(), fields, types, wantFields, wantTypes)
		}
	}
	if got := mapKeys(got.UserTypes); !slices.Equal(got, names) {
		t.Errorf("gocql's types %v, the API's %v", got, names)
	}
}

// compareDriverIndexes compares system_schema.indexes, read through the
// driver, with the API's indexes.
func compareDriverIndexes(t *testing.T, session *gocql.Session, want *pb.Keyspace, described string) {
	t.Helper()
	var got, wanted []string
	iter := session.Query(`SELECT table_name, index_name, kind, options FROM system_schema.indexes WHERE keyspace_name = 'app'`).Iter()
	var table, name, kind string
	var options map[string]string
	for iter.Scan(&table, &name, &kind, &options) {
		got = append(got, fmt.Sprintf("%s.%s %s target=%s", table, name, kind, options["target"]))
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	for _, ix := range want.GetIndexes() {
		kind, target := "COMPOSITES", ix.GetColumn()
		if ix.GetCustom() {
			kind = "CUSTOM"
		}
		if ix.GetTarget() != "" {
			target = ix.GetTarget() + "(" + ix.GetColumn() + ")"
		}
		wanted = append(wanted, fmt.Sprintf("%s.%s %s target=%s", ix.GetTable(), ix.GetName(), kind, target))
		if !strings.Contains(described, "CREATE INDEX "+ix.GetName()+" ON app."+ix.GetTable()) {
			t.Errorf("describe app does not create the index %s", ix.GetName())
		}
	}
	sort.Strings(got)
	sort.Strings(wanted)
	if !slices.Equal(got, wanted) {
		t.Errorf("system_schema.indexes through gocql:\n%s\nthe API's indexes:\n%s", strings.Join(got, "\n"), strings.Join(wanted, "\n"))
	}
}

// driverType is a CQL type text as both sides are compared: lowercase,
// without spaces, and without frozen<...>, which gocql's parsed field
// types do not keep.
func driverType(s string) string {
	s = strings.ToLower(strings.ReplaceAll(s, " ", ""))
	for {
		i := strings.Index(s, "frozen<")
		if i < 0 {
			return s
		}
		depth, j := 0, i+len("frozen<")
		for ; j < len(s); j++ {
			if s[j] == '<' {
				depth++
			} else if s[j] == '>' {
				if depth == 0 {
					break
				}
				depth--
			}
		}
		s = s[:i] + s[i+len("frozen<"):j] + s[j+1:]
	}
}

// gocqlTypeText writes a type gocql parsed as driverType writes the API's.
func gocqlTypeText(ti gocql.TypeInfo) string {
	switch ti := ti.(type) {
	case gocql.CollectionType:
		if ti.Type() == gocql.TypeMap {
			return "map<" + gocqlTypeText(ti.Key) + "," + gocqlTypeText(ti.Elem) + ">"
		}
		return ti.Type().String() + "<" + gocqlTypeText(ti.Elem) + ">"
	case gocql.TupleTypeInfo:
		var elems []string
		for _, e := range ti.Elems {
			elems = append(elems, gocqlTypeText(e))
		}
		return "tuple<" + strings.Join(elems, ",") + ">"
	case gocql.NativeType:
		if ti.Type() == gocql.TypeCustom {
			return ti.Custom()
		}
		return ti.Type().String()
	}
	return fmt.Sprint(ti)
}

// ownRows counts the rows of Cassandra's own keyspaces (system,
// system_schema) among rows (keyspace "." ...), which system_schema lists
// beside the member's, and fails t on a row of any other keyspace but big.
func ownRows(t *testing.T, rows map[string]int) int {
	t.Helper()
	own := 0
	for row := range rows {
		switch ks, _, _ := strings.Cut(row, "."); ks {
		case "big":
		case "system", "system_schema":
			own++
		default:
			t.Errorf("row %s of an unknown keyspace", row)
		}
	}
	return own
}

// bigTables is how many tables TestGocqlPagesTenThousandTables makes.
const bigTables = 10000

// TestGocqlPagesTenThousandTables: with 10,000 tables in one keyspace
// (made through the CLI, 500 statements to an atomic request), gocql
// pages through system_schema.tables and system_schema.columns 500 rows
// at a time, the whole tables and one partition, and gets every row
// exactly once: 10,000 tables, 20,000 columns; and so does gocql's own
// paging, which fetches pages as the rows are read. The default guardrails
// only warn past 1,000 tables, and the metadata stays under the default
// max_mutation_size, so the member runs with its defaults.
func TestGocqlPagesTenThousandTables(t *testing.T) {
	s := newServer(t)
	s.start()
	s.mustCLI(0, "exec", "-e", "CREATE KEYSPACE big WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	dir := t.TempDir()
	const perRequest = 500
	for from := 0; from < bigTables; from += perRequest {
		var b strings.Builder
		for i := from; i < from+perRequest; i++ {
			fmt.Fprintf(&b, "CREATE TABLE big.t%05d (id int PRIMARY KEY, v text);\n", i)
		}
		file := filepath.Join(dir, fmt.Sprintf("t%05d.cql", from))
		if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		s.mustCLI(0, "exec", "--atomic", "-f", file)
	}
	session := gocqlSession(t, s.cqlAddr, nil, nil)

	for _, q := range []struct {
		stmt string
		per  int // rows per table of big
	}{
		{"SELECT keyspace_name, table_name FROM system_schema.tables", 1},
		{"SELECT keyspace_name, table_name FROM system_schema.tables WHERE keyspace_name = 'big'", 1},
		{"SELECT keyspace_name, table_name, column_name FROM system_schema.columns", 2},
		{"SELECT keyspace_name, table_name, column_name FROM system_schema.columns WHERE keyspace_name = 'big'", 2},
	} {
		rows, pages := pageRows(t, session, q.stmt, 500)
		own := ownRows(t, rows) // Cassandra's own keyspaces, listed beside the member's
		if len(rows)-own != bigTables*q.per {
			t.Errorf("%s: %d distinct rows of big, want %d", q.stmt, len(rows)-own, bigTables*q.per)
		}
		// gocql's own paging, which fetches the next page as the rows are read.
		iter := session.Query(q.stmt).PageSize(500).Iter()
		sc, n, distinct := iter.Scanner(), 0, map[string]bool{}
		for sc.Next() {
			var ks, table, col string
			dest := []any{&ks, &table, &col}[:len(iter.Columns())]
			if err := sc.Scan(dest...); err != nil {
				t.Fatal(err)
			}
			n, distinct[ks+"."+table+"."+col] = n+1, true
		}
		if err := sc.Err(); err != nil || n != bigTables*q.per+own || len(distinct) != n {
			t.Errorf("%s, paged by gocql: %d rows, %d distinct (%v), want %d", q.stmt, n, len(distinct), err, bigTables*q.per+own)
		}
		perTable := map[string]int{}
		for row, n := range rows {
			if n != 1 {
				t.Errorf("%s: row %s came %d times", q.stmt, row, n)
			}
			if ks, rest, _ := strings.Cut(row, "."); ks == "big" {
				table, _, _ := strings.Cut(rest, ".")
				perTable[table]++
			}
		}
		if len(perTable) != bigTables {
			t.Errorf("%s: rows of %d tables of big, want %d", q.stmt, len(perTable), bigTables)
		}
		for i := range bigTables {
			if name := fmt.Sprintf("t%05d", i); perTable[name] != q.per {
				t.Errorf("%s: %d rows of big.%s, want %d", q.stmt, perTable[name], name, q.per)
				break
			}
		}
		if min := bigTables * q.per / 500; pages < min {
			t.Errorf("%s: %d pages, want at least %d", q.stmt, pages, min)
		}
	}
}

// pageRows runs stmt page by page, pageSize rows a page, and returns how
// many times each row (its text columns joined with ".") came and how
// many pages there were; a page with more rows than pageSize fails t.
func pageRows(t *testing.T, session *gocql.Session, stmt string, pageSize int) (rows map[string]int, pages int) {
	t.Helper()
	rows = map[string]int{}
	var state []byte
	for {
		iter := session.Query(stmt).PageSize(pageSize).PageState(state).Iter()
		cols := make([]string, len(iter.Columns()))
		dest := make([]any, len(cols))
		for i := range cols {
			dest[i] = &cols[i]
		}
		n := 0
		for iter.Scan(dest...) {
			rows[strings.Join(cols, ".")]++
			n++
		}
		state = iter.PageState()
		if err := iter.Close(); err != nil {
			t.Fatalf("%s, page %d: %v", stmt, pages+1, err)
		}
		if n > pageSize {
			t.Fatalf("%s: page %d has %d rows, more than the page size %d", stmt, pages+1, n, pageSize)
		}
		pages++
		if len(state) == 0 {
			return rows, pages
		}
	}
}
