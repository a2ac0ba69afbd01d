package cqlserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
	mlclient "github.com/metalog/metalog/client"
	"github.com/metalog/metalog/cqlserver/internal/systemschema"
	"github.com/metalog/metalog/internal/testkit/serverkit"
)

// The Python driver tests run DataStax's Python driver (Debian's
// python3-cassandra, which installs into the system Python: hence that
// interpreter, not whichever python3 is first on PATH) as a program
// would, with the scripts in testdata/python.
const (
	pythonPath = "/usr/bin/python3"
	// requirePythonEnv, when set (CI sets it once
	// .ci/install-python-cassandra has installed the driver), turns a
	// missing driver into a failure instead of a skip, so that these tests
	// cannot pass by not running.
	requirePythonEnv = "METALOG_REQUIRE_PYTHON_CASSANDRA"
	// scriptTimeout bounds one run of a script, the driver's start-up
	// included, on a loaded machine.
	scriptTimeout = 3 * time.Minute
	// eventWait is how long events.py waits for the changes to reach the
	// driver (it returns as soon as they have).
	eventWait = 90
)

// requirePythonDriver skips the test, or fails it when requirePythonEnv
// is set, unless the system Python imports the driver.
func requirePythonDriver(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, pythonPath, "-c", "import cassandra").CombinedOutput()
	if err == nil {
		return
	}
	if fail, msg := missingPythonDriver(err, out, os.Getenv(requirePythonEnv) != ""); fail {
		t.Fatal(msg)
	} else {
		t.Skip(msg)
	}
}

// missingPythonDriver says what a test does when the driver cannot be
// imported: fail when it is required, skip otherwise, and why.
func missingPythonDriver(err error, out []byte, required bool) (fail bool, msg string) {
	why := fmt.Sprintf("%s -c 'import cassandra': %v: %s", pythonPath, err, bytes.TrimSpace(out))
	if required {
		return true, fmt.Sprintf("the Python driver is missing, but %s is set (.ci/install-python-cassandra installed it): %s", requirePythonEnv, why)
	}
	return false, fmt.Sprintf("the Python driver is missing (install it with .ci/install-python-cassandra or apt-get install python3-cassandra): %s", why)
}

// TestMissingPythonDriverFailsWhenRequired: in CI, with the driver
// installed, a Python driver test that cannot import it fails instead
// of skipping.
func TestMissingPythonDriverFailsWhenRequired(t *testing.T) {
	err := fmt.Errorf("exit status 1")
	out := []byte("ModuleNotFoundError: No module named 'cassandra'\n")
	if fail, msg := missingPythonDriver(err, out, true); !fail || !strings.Contains(msg, requirePythonEnv) || !strings.Contains(msg, "ModuleNotFoundError") {
		t.Errorf("required: fail=%v %q", fail, msg)
	}
	if fail, msg := missingPythonDriver(err, out, false); fail || !strings.Contains(msg, "install-python-cassandra") {
		t.Errorf("not required: fail=%v %q", fail, msg)
	}
}

// pyScript is a running script: its result lines come from out.
type pyScript struct {
	t      *testing.T
	name   string
	cmd    *exec.Cmd
	out    *bufio.Scanner
	stderr bytes.Buffer
	done   bool
}

// startPython starts testdata/python/<script> against the CQL listener
// at addr with protocol version proto, req as its standard input and
// extra arguments after the connection's (e.g. "--username", "u",
// "--password", "p" for PlainTextAuthProvider); it is killed after
// scriptTimeout, and when the test ends.
func startPython(t *testing.T, addr string, proto int, script string, req any, extra ...string) *pyScript {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	in, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), scriptTimeout)
	p := &pyScript{t: t, name: script}
	// -B: no bytecode written into testdata.
	args := append([]string{"-B", filepath.Join("testdata", "python", script),
		"--port", port, "--protocol", fmt.Sprint(proto), "--timeout", "60"}, extra...)
	p.cmd = exec.CommandContext(ctx, pythonPath, args...)
	p.cmd.WaitDelay = 10 * time.Second
	p.cmd.Stdin = bytes.NewReader(in)
	p.cmd.Stderr = &p.stderr
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	p.out = bufio.NewScanner(stdout)
	p.out.Buffer(nil, 64<<20)
	t.Cleanup(func() {
		cancel()
		p.wait()
	})
	return p
}

// next decodes the script's next line into v, failing the test (with
// the script's standard error) when there is none.
func (p *pyScript) next(v any) {
	p.t.Helper()
	if !p.out.Scan() {
		err := p.wait()
		p.t.Fatalf("%s: no result line (%v, exit: %v); stderr:\n%s", p.name, p.out.Err(), err, p.stderr.String())
	}
	if err := json.Unmarshal(p.out.Bytes(), v); err != nil {
		p.t.Fatalf("%s: %v in %q", p.name, err, p.out.Text())
	}
}

// wait waits for the script to end, once.
func (p *pyScript) wait() error {
	if p.done {
		return nil
	}
	p.done = true
	return p.cmd.Wait()
}

// finish waits for the script to end and fails the test if it failed.
func (p *pyScript) finish() {
	p.t.Helper()
	if err := p.wait(); err != nil {
		p.t.Fatalf("%s: %v; stderr:\n%s", p.name, err, p.stderr.String())
	}
}

// runPython runs a script to its end and decodes its one result line
// into v; extra are as startPython's.
func runPython(t *testing.T, addr string, proto int, script string, req, v any, extra ...string) {
	t.Helper()
	p := startPython(t, addr, proto, script, req, extra...)
	p.next(v)
	p.finish()
}

// pyInfo is what a script reports of its connection.
type pyInfo struct {
	DriverVersion         string `json:"driver_version"`
	PythonVersion         string `json:"python_version"`
	ProtocolVersion       int    `json:"protocol_version"`
	ReleaseVersion        string `json:"release_version"`
	CQLVersion            string `json:"cql_version"`
	NativeProtocolVersion string `json:"native_protocol_version"`
	LocalDC               string `json:"local_dc"`
	Hosts                 []struct {
		Address, Datacenter, Rack, Distance string
	}
}

// check fails t unless the driver connected with protocol proto to one
// host, in the data center system.local reports, which its DC-aware
// policy takes for local.
func (i pyInfo) check(t *testing.T, proto int) {
	t.Helper()
	t.Logf("python %s, driver %s, protocol %d; server release %s, CQL %s", i.PythonVersion, i.DriverVersion, i.ProtocolVersion, i.ReleaseVersion, i.CQLVersion)
	if i.ProtocolVersion != proto || i.NativeProtocolVersion != fmt.Sprint(proto) {
		t.Errorf("protocol %d (system.local says %q), want %d", i.ProtocolVersion, i.NativeProtocolVersion, proto)
	}
	if i.LocalDC == "" || len(i.Hosts) != 1 || i.Hosts[0].Address != "127.0.0.1" ||
		i.Hosts[0].Datacenter != i.LocalDC || i.Hosts[0].Distance != "local" {
		t.Errorf("local dc %q, hosts %+v: want one host, local, in that dc", i.LocalDC, i.Hosts)
	}
}

// pyKeyspace is the driver's metadata of a keyspace (mlcql.dump_keyspace).
type pyKeyspace struct {
	Name          string
	DurableWrites bool `json:"durable_writes"`
	Replication   string
	Tables        map[string]pyTable
	UserTypes     map[string]pyUserType `json:"user_types"`
}

type pyTable struct {
	Columns       []pyColumn
	PartitionKey  []string       `json:"partition_key"`
	ClusteringKey []pyClustering `json:"clustering_key"`
	Indexes       map[string]pyIndex
}

type pyColumn struct {
	Name, Type string
	Static     bool
}

type pyClustering struct{ Name, Order string }

type pyIndex struct {
	Kind    string
	Options map[string]string
}

type pyUserType struct{ Fields []pyField }

type pyField struct{ Name, Type string }

// driverView is what the driver's metadata should hold of k, as
// Cassandra's drivers see a keyspace: the replication as the driver
// exports it, the columns of each table by name, its keys in key order,
// its indexes with the options Cassandra stores (the target, and the
// class of a custom index), the user types' fields in order.
func driverView(k *pb.Keyspace) pyKeyspace {
	repl := []string{fmt.Sprintf("'class': '%s'", k.GetReplicationClass()[strings.LastIndexByte(k.GetReplicationClass(), '.')+1:])}
	keys := make([]string, 0, len(k.GetReplication()))
	for o := range k.GetReplication() {
		keys = append(keys, o)
	}
	sort.Strings(keys)
	for _, o := range keys {
		repl = append(repl, fmt.Sprintf("'%s': '%s'", o, k.GetReplication()[o]))
	}
	v := pyKeyspace{Name: k.GetName(), DurableWrites: k.GetDurableWrites(), Replication: "{" + strings.Join(repl, ", ") + "}",
		Tables: map[string]pyTable{}, UserTypes: map[string]pyUserType{}}
	for _, t := range k.GetTables() {
		pt := pyTable{PartitionKey: t.GetPartitionKey(), ClusteringKey: []pyClustering{}, Indexes: map[string]pyIndex{}}
		for _, c := range t.GetColumns() {
			pt.Columns = append(pt.Columns, pyColumn{Name: c.GetName(), Type: c.GetType(), Static: c.GetKind() == "static"})
		}
		for _, c := range t.GetClustering() {
			pt.ClusteringKey = append(pt.ClusteringKey, pyClustering{Name: c.GetName(), Order: c.GetOrder()})
		}
		v.Tables[t.GetName()] = pt
	}
	for _, ix := range k.GetIndexes() {
		target := ix.GetColumn()
		if ix.GetTarget() != "" {
			target = ix.GetTarget() + "(" + target + ")"
		}
		pi := pyIndex{Kind: "COMPOSITES", Options: map[string]string{"target": target}}
		if ix.GetCustom() {
			pi.Kind, pi.Options["class_name"] = "CUSTOM", ix.GetClass()
		}
		for o, val := range ix.GetOptions() {
			pi.Options[o] = val
		}
		v.Tables[ix.GetTable()].Indexes[ix.GetName()] = pi
	}
	for _, ut := range k.GetTypes() {
		pu := pyUserType{}
		for _, f := range ut.GetFields() {
			pu.Fields = append(pu.Fields, pyField{Name: f.GetName(), Type: f.GetType()})
		}
		v.UserTypes[ut.GetName()] = pu
	}
	return v
}

// byColumnName is k with each table's columns in name order: the driver
// lists them in its own order (keys first), the server in definition
// order; the key order is in the keys. k is not changed.
func byColumnName(k pyKeyspace) pyKeyspace {
	tables := make(map[string]pyTable, len(k.Tables))
	for name, t := range k.Tables {
		t.Columns = slices.Clone(t.Columns)
		sort.Slice(t.Columns, func(i, j int) bool { return t.Columns[i].Name < t.Columns[j].Name })
		tables[name] = t
	}
	k.Tables = tables
	return k
}

// compareKeyspaceView fails t unless the driver's metadata got equals
// what the server holds of the keyspace, k.
func compareKeyspaceView(t *testing.T, got *pyKeyspace, k *pb.Keyspace) {
	t.Helper()
	if got == nil {
		t.Fatalf("the driver does not know keyspace %s", k.GetName())
	}
	g, want := byColumnName(*got), byColumnName(driverView(k))
	if !reflect.DeepEqual(g, want) {
		gj, _ := json.MarshalIndent(g, "", "  ")
		wj, _ := json.MarshalIndent(want, "", "  ")
		t.Errorf("the driver's metadata of %s:\n%s\nwant (from the server's schema):\n%s", k.GetName(), gj, wj)
	}
}

// grpcClient is a metalog client of s, closed when the test ends.
func grpcClient(t *testing.T, s *serverkit.Server) *mlclient.Client {
	t.Helper()
	c, err := mlclient.New(mlclient.Config{Endpoints: []string{s.GRPCAddr()}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// execute runs DDL text through c.
func execute(t *testing.T, c *mlclient.Client, ddl string) {
	t.Helper()
	if _, err := c.Execute(context.Background(), &pb.ExecuteRequest{Statements: ddl}); err != nil {
		t.Fatalf("executing %q: %v", ddl, err)
	}
}

// keyspaceOf reads keyspace ks through c, with its DESCRIBE text.
func keyspaceOf(t *testing.T, c *mlclient.Client, ks string) *pb.GetKeyspaceResponse {
	t.Helper()
	r, err := c.GetKeyspace(context.Background(), &pb.GetKeyspaceRequest{Keyspace: ks, Format: "cql"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// noServerErrors fails t if the server answered the driver with errors.
func noServerErrors(t *testing.T, errs []string) {
	t.Helper()
	if len(errs) > 0 {
		t.Errorf("the server answered the driver with %d errors:\n%s", len(errs), strings.Join(errs, "\n"))
	}
}

// forProtocols runs test once per native protocol version the server
// serves, with the driver skipped or failed as requirePythonDriver says.
func forProtocols(t *testing.T, test func(t *testing.T, proto int)) {
	t.Helper()
	requirePythonDriver(t)
	for _, proto := range []int{4, 5} {
		t.Run(fmt.Sprintf("v%d", proto), func(t *testing.T) { test(t, proto) })
	}
}

// pythonDDL is the schema the Python driver creates: partition and
// clustering keys with a DESC order, a static column, a user type used
// frozen, collections, a quoted name and secondary indexes. The tables
// are created in name order: the driver exports a keyspace's tables in
// the order it learnt them, which after a full read of the schema (as on
// a server the export is loaded into) is system_schema's, by name.
var pythonDDL = []string{
	`CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
	`CREATE TYPE shop.address (street text, city text, zip int)`,
	`CREATE TABLE shop."Items" (id int PRIMARY KEY, "Qty" int, attrs map<text, frozen<list<int>>>)`,
	`CREATE TABLE shop.orders (customer uuid, region text, placed timestamp, seq int, status text static,
		total decimal, ship_to frozen<address>, tags set<text>, note text,
		PRIMARY KEY ((customer, region), placed, seq))
		WITH CLUSTERING ORDER BY (placed DESC, seq ASC) AND comment = 'orders by customer'`,
	`CREATE INDEX orders_note ON shop.orders (note)`,
	`CREATE INDEX orders_tags ON shop.orders (values(tags))`,
}

// schemaResult is what schema.py prints.
type schemaResult struct {
	Info         pyInfo
	Agreed       []bool
	Keyspace     *pyKeyspace
	Export       string
	ServerErrors []string `json:"server_errors"`
}

// TestPythonDriver: the Python driver connects, runs DDL and sees the
// schema agree; its metadata is the server's schema; and what it exports
// loads into a fresh server.
func TestPythonDriver(t *testing.T) {
	forProtocols(t, func(t *testing.T, proto int) {
		s1 := serverkit.New(t, serverkit.WithCQL())
		var res schemaResult
		runPython(t, s1.CQLAddr(), proto, "schema.py", map[string]any{"keyspace": "shop", "statements": pythonDDL}, &res)
		res.Info.check(t, proto)
		noServerErrors(t, res.ServerErrors)
		if len(res.Agreed) != len(pythonDDL) {
			t.Fatalf("%d statements answered, want %d", len(res.Agreed), len(pythonDDL))
		}
		for i, ok := range res.Agreed {
			if !ok {
				t.Errorf("no schema agreement after %s", pythonDDL[i])
			}
		}
		c1 := grpcClient(t, s1)
		compareKeyspaceView(t, res.Keyspace, keyspaceOf(t, c1, "shop").GetKeyspace())
		testPythonExport(t, proto, s1, res)
	})
}

// testPythonExport loads the driver's export_as_string() of a keyspace
// into a fresh server: the driver reads the same keyspace there, exports
// the same text, and DESCRIBE KEYSPACE over the native protocol (what
// cqlsh's DESC prints) is the first server's byte for byte. (metalog's
// own describe differs between the two: it prints table ids, which each
// cluster derives for itself and the export does not carry, and only the
// options a table sets, which the export states all of; Cassandra's
// DESCRIBE, which the listener follows, prints ids only WITH INTERNALS
// and every option.)
func testPythonExport(t *testing.T, proto int, s1 *serverkit.Server, first schemaResult) {
	t.Helper()
	s2 := serverkit.New(t, serverkit.WithCQL())
	c2 := grpcClient(t, s2)
	execute(t, c2, first.Export)
	var second schemaResult
	runPython(t, s2.CQLAddr(), proto, "schema.py", map[string]any{"keyspace": "shop", "statements": []string{}}, &second)
	noServerErrors(t, second.ServerErrors)
	if second.Export != first.Export {
		t.Errorf("export of the loaded keyspace:\n%s\nwant the export loaded:\n%s", second.Export, first.Export)
	}
	if !reflect.DeepEqual(second.Keyspace, first.Keyspace) {
		t.Errorf("the driver's metadata of the loaded keyspace: %+v, want %+v", second.Keyspace, first.Keyspace)
	}
	compareKeyspaceView(t, second.Keyspace, keyspaceOf(t, c2, "shop").GetKeyspace())
	want, got := cqlDescribe(t, s1.CQLAddr(), "DESCRIBE KEYSPACE shop"), cqlDescribe(t, s2.CQLAddr(), "DESCRIBE KEYSPACE shop")
	if got != want || !strings.Contains(want, "CREATE TABLE shop.orders") {
		t.Errorf("DESCRIBE KEYSPACE shop of the export loaded:\n%s\nwant the first server's:\n%s", got, want)
	}
}

// cqlDescribe runs a DESCRIBE through gocql on addr and returns its
// create_statement column, one statement after another.
func cqlDescribe(t *testing.T, addr, query string) string {
	t.Helper()
	session, err := gocqlAt(addr).CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	var b strings.Builder
	var ks, typ, name, stmt string
	iter := session.Query(query).Iter()
	for iter.Scan(&ks, &typ, &name, &stmt) {
		b.WriteString(stmt)
		b.WriteString("\n")
	}
	if err := iter.Close(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return b.String()
}

// eventsResult is what events.py prints last.
type eventsResult struct {
	Info         pyInfo
	Seen         bool
	Keyspace     *pyKeyspace
	ServerErrors []string `json:"server_errors"`
}

// TestPythonSchemaEvents: changes made through gRPC after the driver
// connected reach its metadata by the SCHEMA_CHANGE events its control
// connection registered for, the script never asking for a refresh.
func TestPythonSchemaEvents(t *testing.T) {
	forProtocols(t, func(t *testing.T, proto int) {
		s := serverkit.New(t, serverkit.WithCQL())
		c := grpcClient(t, s)
		p := startPython(t, s.CQLAddr(), proto, "events.py", map[string]any{
			"keyspace": "live", "tables": map[string][]string{"orders": {"id", "at", "note", "p", "extra"}, "notes": {"id"}},
			"types": []string{"point"}, "indexes": []string{"orders_note"}, "wait_seconds": eventWait,
		})
		var ready struct{ Ready, Known bool }
		p.next(&ready)
		if !ready.Ready || ready.Known {
			t.Fatalf("script not ready, or it knows keyspace live before it is made: %+v", ready)
		}
		execute(t, c, `CREATE KEYSPACE live WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
		var known struct{ Keyspace bool }
		if p.next(&known); !known.Keyspace {
			t.Fatalf("keyspace live did not reach the driver within %ds", eventWait)
		}
		for _, ddl := range []string{
			`CREATE TYPE live.point (x int, y int)`,
			`CREATE TABLE live.orders (id int, at timestamp, note text, p frozen<point>, PRIMARY KEY (id, at)) WITH CLUSTERING ORDER BY (at DESC)`,
			`CREATE TABLE live.notes (id int PRIMARY KEY)`,
			`ALTER TABLE live.orders ADD extra list<int>`,
			`CREATE INDEX orders_note ON live.orders (note)`,
		} {
			execute(t, c, ddl)
		}
		var res eventsResult
		p.next(&res)
		p.finish()
		res.Info.check(t, proto)
		noServerErrors(t, res.ServerErrors)
		if !res.Seen {
			t.Fatalf("the changes did not reach the driver within %ds: it has %+v", eventWait, res.Keyspace)
		}
		compareKeyspaceView(t, res.Keyspace, keyspaceOf(t, c, "live").GetKeyspace())
	})
}

// pagingResult is what paging.py prints.
type pagingResult struct {
	Info         pyInfo
	Rows         [][3]string
	Pages        int
	PageSizes    []int    `json:"page_sizes"`
	ServerErrors []string `json:"server_errors"`
}

// TestPythonPaging: the driver pages through system_schema.columns of a
// few hundred tables and gets every row once.
func TestPythonPaging(t *testing.T) {
	const tables, fetchSize = 300, 97
	forProtocols(t, func(t *testing.T, proto int) {
		s := serverkit.New(t, serverkit.WithCQL())
		c := grpcClient(t, s)
		execute(t, c, tablesDDL(tables))
		schema, err := c.GetSchema(context.Background(), &pb.GetSchemaRequest{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[[3]string]bool{}
		for _, k := range schema.GetKeyspaces() {
			for _, tb := range k.GetTables() {
				for _, col := range tb.GetColumns() {
					want[[3]string{k.GetName(), tb.GetName(), col.GetName()}] = true
				}
			}
		}
		var res pagingResult
		runPython(t, s.CQLAddr(), proto, "paging.py", map[string]any{"fetch_size": fetchSize}, &res)
		res.Info.check(t, proto)
		noServerErrors(t, res.ServerErrors)
		if len(want) != 2*tables {
			t.Fatalf("the server holds %d columns, want %d", len(want), 2*tables)
		}
		for _, k := range systemschema.Own().Keyspaces() { // listed beside the member's
			for _, tb := range k.Tables() {
				for _, col := range tb.Columns {
					want[[3]string{k.Name, tb.Name, col.Name}] = true
				}
			}
		}
		seen := map[[3]string]int{}
		for _, r := range res.Rows {
			seen[r]++
			if seen[r] == 2 {
				t.Errorf("row %v came twice", r)
			}
			if !want[r] {
				t.Errorf("row %v is not a column of the schema", r)
			}
		}
		if len(seen) != len(want) {
			t.Errorf("%d distinct rows of %d columns", len(seen), len(want))
		}
		if res.Pages < 2 || len(res.PageSizes) != res.Pages {
			t.Errorf("%d rows came in %d pages (%v), want more than one of at most %d", len(res.Rows), res.Pages, res.PageSizes, fetchSize)
		}
		for _, n := range res.PageSizes {
			if n > fetchSize {
				t.Errorf("a page of %d rows, more than the fetch size %d", n, fetchSize)
			}
		}
	})
}
