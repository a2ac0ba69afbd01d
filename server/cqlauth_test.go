package server

import (
	"context"
	"crypto/tls"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/metalog/metalog/api"
	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/internal/testkit"
)

// TestCQLAuth: with authentication on, the CQL listener takes the
// server's own credentials, as gRPC does: a token from auth_token_file
// as the PasswordAuthenticator password, or a client certificate of
// client_ca_file with auth_cert_roles (no password asked then). Without
// either a driver cannot connect; a token without ddl may not change
// the schema; the history names the principal of each change.
func TestCQLAuth(t *testing.T) {
	f := newAuthFiles(t)
	testkit.WriteFile(t, filepath.Join(f.dir, "tokens"), []byte(
		"reader "+api.HashToken("r-token")+" reader\n"+
			"shopdev "+api.HashToken("d-token")+" ddl@shop,reader\n"))
	srv := startCQL(t, func(c *Config) {
		c.CQLAddr = "127.0.0.1:0"
		c.ClientCertFile, c.ClientKeyFile = filepath.Join(f.dir, "srv.crt"), filepath.Join(f.dir, "srv.key")
		c.ClientCAFile, c.AuthTokenFile = filepath.Join(f.dir, "ca.crt"), filepath.Join(f.dir, "tokens")
		c.AuthCertRoles = "app=ddl,reader"
		c.InsecurePeer = true // a test of the client port
	})
	appCert, appKey := f.ca.IssueFiles(t, "app", "app")
	pair, err := tls.LoadX509KeyPair(appCert, appKey)
	if err != nil {
		t.Fatal(err)
	}
	session := func(token string, cert bool) (*gocql.Session, error) {
		conf := &tls.Config{RootCAs: f.ca.Pool(), ServerName: "127.0.0.1"}
		if cert {
			conf.Certificates = []tls.Certificate{pair}
		}
		cluster := gocql.NewCluster(srv.CQLAddr())
		cluster.ProtoVersion = 4
		cluster.Timeout, cluster.ConnectTimeout = 10*time.Second, 10*time.Second
		cluster.NumConns = 1
		cluster.DisableInitialHostLookup = true
		cluster.SslOpts = &gocql.SslOptions{Config: conf, EnableHostVerification: true}
		if token != "" {
			cluster.Authenticator = gocql.PasswordAuthenticator{Username: "ci", Password: token}
		}
		return cluster.CreateSession()
	}

	if _, err := session("", false); err == nil || !strings.Contains(err.Error(), "authentication required") {
		t.Fatalf("no credentials: %v, want authentication required", err)
	}
	if _, err := session("not-a-token", false); err == nil || !strings.Contains(err.Error(), "unknown token") {
		t.Fatalf("unknown token: %v, want it refused", err)
	}
	app, err := session("", true)
	if err != nil {
		t.Fatalf("client certificate app: %v", err)
	}
	defer app.Close()
	if err := app.Query(`CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`).Exec(); err != nil {
		t.Fatal(err)
	}
	reader, err := session("r-token", false)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if err := reader.Query(`CREATE TABLE shop.t (id int PRIMARY KEY)`).Exec(); err == nil || !strings.Contains(err.Error(), "needs role ddl; token:reader has roles reader") {
		t.Fatalf("DDL with a reader token: %v, want it refused", err)
	}
	dev, err := session("d-token", false)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	if err := dev.Query(`CREATE TABLE shop.t (id int PRIMARY KEY)`).Exec(); err != nil {
		t.Fatal(err)
	}
	checkPrincipals(t, srv, pair, f.ca, []string{"cert:app", "token:shopdev"})
}

// checkPrincipals reads the history through gRPC and checks that its
// changes were made by want, in order.
func checkPrincipals(t *testing.T, srv *Server, pair tls.Certificate, ca *testkit.CA, want []string) {
	t.Helper()
	conn, err := grpc.NewClient(srv.GRPCAddr(), grpc.WithTransportCredentials(credentials.NewTLS(
		&tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{pair}})))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := pb.NewMetadataServiceClient(conn).History(ctx, &pb.HistoryRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range resp.GetEvents() {
		got = append(got, ev.GetPrincipal())
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("history principals %v, want %v", got, want)
	}
}
