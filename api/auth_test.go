package api

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/access"
	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/internal/testkit"
)

func TestEveryMethodHasARole(t *testing.T) {
	for _, m := range pb.MetadataService_ServiceDesc.Methods {
		if _, ok := methodRoles["/metalog.v1.MetadataService/"+m.MethodName]; !ok {
			t.Errorf("method %s has no role in methodRoles", m.MethodName)
		}
	}
}

// authFixture is an authenticator with tokens and a client CA.
type authFixture struct {
	a        *authenticator
	ca       *testkit.CA
	leafs    map[string][]*x509.Certificate
	foreignC []*x509.Certificate
}

func newAuthFixture(t *testing.T) *authFixture {
	ca := testkit.NewCA(t, "clients")
	pool := ca.Pool()
	tokens := newTestTokens(t, "reader "+HashToken("r-token")+" reader\nops "+HashToken("o-token")+" operator,reader\n")
	certRoles := map[string]access.Grants{"app": grantsOf(t, "ddl"), "viewer": grantsOf(t, "reader")}
	a := newAuthenticator(AuthOptions{Enabled: true, Tokens: tokens, ClientCAs: func() *x509.CertPool { return pool }, CertRoles: certRoles})
	f := &authFixture{a: a, ca: ca, leafs: map[string][]*x509.Certificate{}}
	chain := func(c *testkit.Cert) []*x509.Certificate { return []*x509.Certificate{c.TLS.Leaf} }
	for _, cn := range []string{"app", "viewer", "nobody"} {
		f.leafs[cn] = chain(ca.Issue(t, cn))
	}
	f.leafs["expired"] = chain(ca.Issue(t, "app", testkit.Valid(time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour))))
	f.foreignC = chain(testkit.NewCA(t, "other").Issue(t, "app"))
	return f
}

// grantsOf parses roles ("ddl,reader").
func grantsOf(t testing.TB, roles string) access.Grants {
	t.Helper()
	g, err := access.ParseGrants(strings.Split(roles, ","))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// ctx builds a server-side context as a gRPC connection would.
func tlsCtx(chain []*x509.Certificate, md metadata.MD) context.Context {
	ctx := metadata.NewIncomingContext(context.Background(), md)
	info := credentials.TLSInfo{State: tls.ConnectionState{PeerCertificates: chain}}
	return peer.NewContext(ctx, &peer.Peer{AuthInfo: info})
}

func TestAuthorize(t *testing.T) {
	f := newAuthFixture(t)
	const execute, setGuardrails, getSchema = "/metalog.v1.MetadataService/Execute",
		"/metalog.v1.MetadataService/SetGuardrails", "/metalog.v1.MetadataService/GetSchema"
	bearer := func(tok string) metadata.MD { return metadata.Pairs("authorization", "Bearer "+tok) }
	gw := func(chain []*x509.Certificate) metadata.MD {
		return metadata.Pairs(mdGatewaySecret, f.a.secret, mdGatewayCert, encodeChain(chain))
	}
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		method string
		want   codes.Code
		msg    string
	}{
		{"no credentials", tlsCtx(nil, nil), getSchema, codes.Unauthenticated, "authentication required"},
		{"reader token reads", tlsCtx(nil, bearer("r-token")), getSchema, codes.OK, ""},
		{"reader token executes", tlsCtx(nil, bearer("r-token")), execute, codes.PermissionDenied, "Execute needs role ddl; token:reader has roles reader"},
		{"operator token", tlsCtx(nil, bearer("o-token")), setGuardrails, codes.OK, ""},
		{"unknown token", tlsCtx(nil, bearer("guess")), getSchema, codes.Unauthenticated, "unknown token"},
		{"not bearer", tlsCtx(nil, metadata.Pairs("authorization", "Basic eA==")), getSchema, codes.Unauthenticated, "Bearer"},
		{"ddl cert executes", tlsCtx(f.leafs["app"], nil), execute, codes.OK, ""},
		{"ddl cert sets guardrails", tlsCtx(f.leafs["app"], nil), setGuardrails, codes.PermissionDenied, "needs role operator; cert:app has roles ddl"},
		{"cert without roles", tlsCtx(f.leafs["nobody"], nil), getSchema, codes.PermissionDenied, "cert:nobody has no role"},
		{"expired cert", tlsCtx(f.leafs["expired"], nil), execute, codes.Unauthenticated, "expired at"},
		{"foreign cert", tlsCtx(f.foreignC, nil), execute, codes.Unauthenticated, "refused"},
		{"unknown method", tlsCtx(nil, bearer("o-token")), "/other.Service/Do", codes.PermissionDenied, "not open"},
		{"gateway forwards a cert", tlsCtx(nil, gw(f.leafs["app"])), execute, codes.OK, ""},
		{"gateway forwards an expired cert", tlsCtx(nil, gw(f.leafs["expired"])), execute, codes.Unauthenticated, "expired"},
		{"forged gateway cert without the secret", tlsCtx(nil, metadata.Pairs(mdGatewayCert, encodeChain(f.leafs["app"]))), execute, codes.Unauthenticated, "authentication required"},
		{"forged gateway secret", tlsCtx(nil, metadata.Pairs(mdGatewaySecret, "guess", mdGatewayCert, encodeChain(f.leafs["app"]))), execute, codes.Unauthenticated, ""},
		{"second secret value", tlsCtx(nil, metadata.Pairs(mdGatewaySecret, "guess", mdGatewaySecret, f.a.secret, mdGatewayCert, encodeChain(f.leafs["app"]))), execute, codes.Unauthenticated, ""},
		{"reflection for readers", tlsCtx(f.leafs["viewer"], nil), "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", codes.OK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, err := f.a.authorize(tc.ctx, tc.method, nil)
			if got := status.Code(err); got != tc.want {
				t.Fatalf("code %v (%v), want %v", got, err, tc.want)
			}
			if p := principal(ctx); err == nil && !strings.HasPrefix(p, "token:") && !strings.HasPrefix(p, "cert:") {
				t.Fatalf("principal of an authorized call: %q, want token:NAME or cert:CN", p)
			}
			if tc.msg != "" && !strings.Contains(status.Convert(err).Message(), tc.msg) {
				t.Fatalf("message %q, want it to contain %q", status.Convert(err).Message(), tc.msg)
			}
		})
	}
}

func TestAuthDisabledAllowsEverything(t *testing.T) {
	a := newAuthenticator(AuthOptions{})
	ctx, err := a.authorize(context.Background(), "/metalog.v1.MetadataService/SetGuardrails", nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := principal(ctx); p != Anonymous {
		t.Fatalf("principal with auth off: %q, want %q", p, Anonymous)
	}
}

func TestGatewayHeaderMatcherDropsOwnKeys(t *testing.T) {
	for _, k := range []string{"X-Metalog-Gateway-Secret", "Grpc-Metadata-X-Metalog-Gateway-Client-Cert", "x-metalog-anything"} {
		if _, ok := gatewayHeaderMatcher(k); ok {
			t.Errorf("%s forwarded", k)
		}
	}
}
