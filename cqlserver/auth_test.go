package cqlserver_test

import (
	"context"
	"crypto/x509"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/metalog/metalog/access"
	"github.com/metalog/metalog/cqlserver"
	"github.com/metalog/metalog/cqlserver/internal/wire"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
)

// tokenAuth is an Authenticator over a fixed token table, as the API's
// token file would be: token → grants, the principal "token:" + token.
type tokenAuth map[string]string

func (a tokenAuth) Identify(chain []*x509.Certificate, token string) (string, access.Grants, error) {
	if len(chain) > 0 {
		return "", nil, errors.New("no certificates in this test")
	}
	roles, ok := a[token]
	if !ok {
		return "", nil, errors.New("bearer token refused: unknown token")
	}
	var grants access.Grants
	if roles != "" {
		var err error
		if grants, err = access.ParseGrants(strings.Split(roles, ",")); err != nil {
			return "", nil, err
		}
	}
	return "token:" + token, grants, nil
}

// testTokens are the tokens of the auth tests.
var testTokens = tokenAuth{
	"admin":     "ddl,reader",
	"shop-ro":   "reader@shop",
	"shop-dev":  "ddl@shop,reader@shop",
	"roleless":  "",
	"ddl-nosee": "ddl",
}

// otherDDL is a second keyspace beside shopDDL's.
const otherDDL = `CREATE KEYSPACE other WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};`

// plain is a SASL PLAIN AUTH_RESPONSE.
func plain(user, password string) *wire.AuthResponse {
	return &wire.AuthResponse{Token: []byte("\x00" + user + "\x00" + password)}
}

// authStarted sends STARTUP to a server with authentication on and
// checks that it asks for PasswordAuthenticator.
func (c *client) authStarted() {
	c.t.Helper()
	c.send(1, &wire.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}})
	f := c.recv()
	if f.Opcode != wire.OpAuthenticate {
		c.t.Fatalf("STARTUP answered with %v (%s), want AUTHENTICATE", f.Opcode, decodeError(f))
	}
	if got := wire.NewDecoder(f.Body).Str(); got != "org.apache.cassandra.auth.PasswordAuthenticator" {
		c.t.Fatalf("AUTHENTICATE names %q", got)
	}
}

// recordingWriter records the requests it runs and applies none.
type recordingWriter struct {
	mu   sync.Mutex
	reqs []member.Request
}

func (w *recordingWriter) Execute(_ context.Context, req member.Request) (metadata.Outcome, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reqs = append(w.reqs, req)
	return metadata.Outcome{}, nil
}

// TestAuthHandshake: with authentication on, STARTUP is answered
// AUTHENTICATE; a request before a successful AUTH_RESPONSE is a protocol
// error that closes the connection; a refused token is an authentication
// error after which the client may try again; the principal and grants
// of the token ride with its DDL.
func TestAuthHandshake(t *testing.T) {
	w := &recordingWriter{}
	withAuth := func(cfg *cqlserver.Config) { cfg.Authenticator = testTokens }

	c := start(t, w, shopDDL, withAuth)
	c.authStarted()
	c.send(2, &wire.Query{Query: "CREATE TABLE shop.x (id int PRIMARY KEY)", Params: wire.QueryParams{Consistency: wire.One}})
	if r := decode(t, c.recv()); r.code != wire.CodeProtocol || !strings.Contains(r.message, "expecting AUTH_RESPONSE") {
		t.Fatalf("QUERY before AUTH_RESPONSE: %+v, want a protocol error", r)
	}
	if _, err := wire.ReadFrame(c.nc, 1<<20); err == nil {
		t.Fatal("the connection stayed open after a request before authentication")
	}

	c = start(t, w, shopDDL+otherDDL, withAuth)
	c.authStarted()
	for i, tc := range []struct {
		resp *wire.AuthResponse
		want string
	}{
		{&wire.AuthResponse{Token: []byte("no nul bytes")}, "not SASL PLAIN"},
		{plain("ci", "wrong"), "unknown token"},
		{plain("ci", "roleless"), "token:roleless holds no role"},
	} {
		c.send(int16(2+i), tc.resp)
		if r := decode(t, c.recv()); r.code != wire.CodeAuthentication || !strings.Contains(r.message, tc.want) {
			t.Errorf("AUTH_RESPONSE %q: %+v, want an authentication error saying %q", tc.resp.Token, r, tc.want)
		}
	}
	c.send(9, plain("ci", "shop-dev"))
	if f := c.recv(); f.Opcode != wire.OpAuthSuccess {
		t.Fatalf("good token answered with %v: %s", f.Opcode, decodeError(f))
	}
	c.send(10, &wire.Query{Query: "CREATE TABLE shop.x (id int PRIMARY KEY)", Params: wire.QueryParams{Consistency: wire.One}})
	if f := c.recv(); f.Opcode != wire.OpResult {
		t.Fatalf("DDL after AUTH_SUCCESS: %v %s", f.Opcode, decodeError(f))
	}
	c.send(11, &wire.Query{Query: "USE other", Params: wire.QueryParams{Consistency: wire.One}})
	if r := decode(t, c.recv()); r.code != wire.CodeInvalid || r.message != "Keyspace 'other' does not exist" {
		t.Errorf("USE other as ddl@shop,reader@shop: %+v, want it not to exist", r)
	}
	c.send(12, &wire.Query{Query: "USE shop", Params: wire.QueryParams{Consistency: wire.One}})
	if r := decode(t, c.recv()); r.code != 0 || r.strings[0] != "shop" {
		t.Errorf("USE shop as ddl@shop,reader@shop: %+v", r)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.reqs) != 1 || w.reqs[0].Principal != "token:shop-dev" || w.reqs[0].Grants.String() != "ddl@shop,reader@shop" {
		t.Fatalf("requests run: %+v, want one as token:shop-dev with its grants", w.reqs)
	}
}

// TestAuthOffIsAnonymous: without an Authenticator, STARTUP is answered
// READY and DDL runs as the API's anonymous principal, unchecked (nil
// grants).
func TestAuthOffIsAnonymous(t *testing.T) {
	w := &recordingWriter{}
	c := start(t, w, shopDDL, nil)
	c.started()
	c.send(2, &wire.Query{Query: "CREATE TABLE shop.x (id int PRIMARY KEY)", Params: wire.QueryParams{Consistency: wire.One}})
	c.recv()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.reqs) != 1 || w.reqs[0].Principal != "anonymous" || w.reqs[0].Grants != nil {
		t.Fatalf("requests run: %+v, want one as anonymous with nil grants", w.reqs)
	}
}

// feedRecorder hands the query of every feed started to queries and
// sends nothing.
type feedRecorder struct {
	fakeReader
	queries chan member.WatchQuery
}

func (r *feedRecorder) Watch(ctx context.Context, q member.WatchQuery, _ func(member.WatchMessage) error) error {
	r.queries <- q
	<-ctx.Done()
	return ctx.Err()
}

// TestAuthScopedFeed: the event feed of a scoped reader follows only the
// keyspaces it may read.
func TestAuthScopedFeed(t *testing.T) {
	r := &feedRecorder{queries: make(chan member.WatchQuery, 1)}
	c := start(t, &fakeWriter{exec: noWrites}, "", func(cfg *cqlserver.Config) {
		cfg.Reader, cfg.Authenticator = r, testTokens
	})
	c.authStarted()
	c.send(2, plain("ci", "shop-ro"))
	c.recv()
	c.send(3, &wire.Register{Events: []string{wire.EventSchemaChange}})
	if f := c.recv(); f.Opcode != wire.OpReady {
		t.Fatalf("REGISTER: %v %s", f.Opcode, decodeError(f))
	}
	var q member.WatchQuery
	select {
	case q = <-r.queries:
	case <-time.After(10 * time.Second):
		t.Fatal("no feed started")
	}
	if q.Visible == nil || !q.Visible("shop") || q.Visible("other") {
		t.Fatal("the feed of reader@shop is not limited to shop")
	}
}

// gocqlAs is a gocql session on srv's address as the holder of token,
// or the error of connecting.
func gocqlAs(cluster *gocql.ClusterConfig, token string) (*gocql.Session, error) {
	c := *cluster
	if token != "" {
		c.Authenticator = gocql.PasswordAuthenticator{Username: "ci", Password: token}
	}
	return c.CreateSession()
}

// TestAuthGocql: gocql with PasswordAuthenticator against a member.
// Without a token, or with a wrong one, it cannot connect; a scoped
// reader sees only its keyspaces (in system_schema, the driver's
// metadata, DESCRIBE and USE) and may not run DDL; a scoped ddl holder
// changes its keyspace and is refused another.
func TestAuthGocql(t *testing.T) {
	m := startMember(t)
	cluster := gocqlCluster(t, m, func(cfg *cqlserver.Config) { cfg.Authenticator = testTokens })

	if _, err := gocqlAs(cluster, ""); err == nil || !strings.Contains(err.Error(), "authentication required") {
		t.Fatalf("no token: %v, want authentication required", err)
	}
	if _, err := gocqlAs(cluster, "wrong"); err == nil || !strings.Contains(err.Error(), "unknown token") {
		t.Fatalf("wrong token: %v, want unknown token", err)
	}
	admin, err := gocqlAs(cluster, "admin")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, stmt := range []string{
		`CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE KEYSPACE other WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TABLE shop.orders (id int PRIMARY KEY)`,
		`CREATE TABLE other.secrets (id int PRIMARY KEY)`,
	} {
		if err := admin.Query(stmt).Exec(); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}

	ro, err := gocqlAs(cluster, "shop-ro")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	checkScopedReads(t, ro)
	var reqErr gocql.RequestError
	if err := ro.Query(`CREATE TABLE shop.more (id int PRIMARY KEY)`).Exec(); !errors.As(err, &reqErr) ||
		reqErr.Code() != gocql.ErrCodeUnauthorized || !strings.Contains(err.Error(), "needs role ddl; token:shop-ro has roles reader@shop") {
		t.Fatalf("DDL of a reader: %v, want Unauthorized naming the role", err)
	}

	dev, err := gocqlAs(cluster, "shop-dev")
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	if err := dev.Query(`CREATE TABLE shop.more (id int PRIMARY KEY)`).Exec(); err != nil {
		t.Fatalf("ddl@shop in shop: %v", err)
	}
	if err := dev.Query(`CREATE TABLE other.more (id int PRIMARY KEY)`).Exec(); !errors.As(err, &reqErr) || reqErr.Code() != gocql.ErrCodeUnauthorized {
		t.Fatalf("ddl@shop in other: %v, want Unauthorized", err)
	}
	md, err := m.Reads().Read(context.Background(), 0, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ks, _ := md.Schema.Keyspace("other"); ks != nil {
		if _, ok := ks.Table("more"); ok {
			t.Fatal("other.more was created by a ddl@shop holder")
		}
	}
}

// checkScopedReads: the holder of reader@shop sees shop and not other.
func checkScopedReads(t *testing.T, s *gocql.Session) {
	t.Helper()
	var names []string
	var name string
	iter := s.Query(`SELECT keyspace_name FROM system_schema.keyspaces`).Iter()
	for iter.Scan(&name) {
		names = append(names, name)
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(names, ",") != "shop,system,system_schema" {
		t.Errorf("system_schema.keyspaces of reader@shop: %v, want [shop system system_schema]", names)
	}
	if _, err := s.KeyspaceMetadata("other"); err == nil {
		t.Error("the driver's metadata of reader@shop has keyspace other")
	}
	if ks, err := s.KeyspaceMetadata("shop"); err != nil || ks.Tables["orders"] == nil {
		t.Errorf("the driver's metadata of reader@shop lacks shop.orders: %v", err)
	}
	var ks, typ string
	iter = s.Query(`DESCRIBE KEYSPACES`).Iter()
	for iter.Scan(&ks, &typ, &name) {
		if ks != "shop" {
			t.Errorf("DESCRIBE KEYSPACES of reader@shop lists %q", ks)
		}
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Query(`DESCRIBE TABLE other.secrets`).Exec(); err == nil {
		t.Error("reader@shop described other.secrets")
	}
}
