package api

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/access"
	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/internal/certchain"
	"github.com/metalog/metalog/internal/safetext"
)

// Role is a right a client identity holds (package access says what each
// allows and how a role is scoped to keyspaces).
type Role = access.Role

// The roles.
const (
	RoleReader   = access.Reader
	RoleDDL      = access.DDL
	RoleOperator = access.Operator
)

// methodRoles is the one place that says which role each RPC needs. A
// method missing from it is refused to everyone when auth is on. Holding
// the role for some keyspaces is enough to call a method; what the call
// may touch or see is then limited to those keyspaces.
var methodRoles = map[string]Role{
	"/metalog.v1.MetadataService/Execute":       RoleDDL,
	"/metalog.v1.MetadataService/GetSchema":     RoleReader,
	"/metalog.v1.MetadataService/GetKeyspace":   RoleReader,
	"/metalog.v1.MetadataService/GetTable":      RoleReader,
	"/metalog.v1.MetadataService/ListMembers":   RoleReader,
	"/metalog.v1.MetadataService/CheckCluster":  RoleReader,
	"/metalog.v1.MetadataService/GetGuardrails": RoleReader,
	"/metalog.v1.MetadataService/SetGuardrails": RoleOperator,
	"/metalog.v1.MetadataService/AddMember":     RoleOperator,
	"/metalog.v1.MetadataService/RemoveMember":  RoleOperator,
	"/metalog.v1.MetadataService/RepairMember":  RoleOperator,
	"/metalog.v1.MetadataService/Watch":         RoleReader,
	"/metalog.v1.MetadataService/History":       RoleReader,
	"/metalog.v1.MetadataService/Backup":        RoleOperator,
	"/metalog.v1.MetadataService/SaveSnapshot":  RoleOperator, // Backup's deprecated name
	"/metalog.v1.MetadataService/Plan":          RoleReader,
	// Who may read the history may learn what became of a request id.
	"/metalog.v1.MetadataService/GetRequestOutcome": RoleReader,

	"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo":      RoleReader,
	"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": RoleReader,
}

// unscopedMethods are the methods whose role only an unscoped grant gives,
// with why: they act on the whole cluster, not on some keyspaces, so a
// scoped grant of the role (operator@shop) is refused them with
// PermissionDenied. The other methods open to a scoped grant limit what
// the call touches or sees to its keyspaces in their handlers (Execute's
// statements, the reads).
var unscopedMethods = map[string]string{
	"/metalog.v1.MetadataService/AddMember":     "membership is the whole cluster's",
	"/metalog.v1.MetadataService/RemoveMember":  "membership is the whole cluster's",
	"/metalog.v1.MetadataService/RepairMember":  "a repair rebuilds every keyspace",
	"/metalog.v1.MetadataService/Backup":        "a backup holds every keyspace",
	"/metalog.v1.MetadataService/SaveSnapshot":  "a backup holds every keyspace",
	"/metalog.v1.MetadataService/SetGuardrails": "the cluster's guardrails cover every keyspace",
}

// methodScope returns the keyspaces a call of method with req (nil for a
// stream) needs its role for before its handler runs, and why: every
// keyspace for unscopedMethods, except a SetGuardrails of one keyspace
// scope's override (`guardrails set --keyspace shop`), which needs operator
// on that scope only (operator@shop, or operator@sh*); its handler keeps
// such a caller's fail thresholds at or under the cluster's. ok is false
// for the other methods.
func methodScope(method string, req any) (scope access.Scope, why string, ok bool) {
	if r, isSet := req.(*pb.SetGuardrailsRequest); isSet && r.GetKeyspace() != "" {
		return access.Scope(strings.TrimSpace(r.GetKeyspace())), "a keyspace's guardrail override", true
	}
	why, ok = unscopedMethods[method]
	return access.All, why, ok
}

// Metadata keys the gateway's own connection uses. The HTTP side strips
// anything a caller sends under these names.
const (
	mdGatewaySecret = "x-metalog-gateway-secret"
	mdGatewayCert   = "x-metalog-gateway-client-cert"
	mdPrefix        = "x-metalog-"
)

// HashToken is how a bearer token is stored in the token file: the hex
// SHA-256 of the token. Tokens are random (`metalog token new`), so a plain
// hash is enough; nothing in the file lets one sign in.
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// NewToken returns a random bearer token (32 bytes, base64url).
func NewToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Tokens looks up bearer tokens: package server's token file
// (auth_token_file), which it loads and reloads. Lookup is called for
// every request that sends a token, from any goroutine.
type Tokens interface {
	// Lookup returns the name and the grants of token, and false for a
	// token it does not know.
	Lookup(token string) (name string, grants access.Grants, ok bool)
}

// AuthOptions say how callers authenticate and what they may do. The
// zero value is authentication off: every caller may call every method.
type AuthOptions struct {
	// Enabled makes every call authenticate (auth_token_file or
	// client_ca_file is set).
	Enabled bool
	// Tokens looks up bearer tokens; nil refuses every token (no
	// auth_token_file).
	Tokens Tokens
	// ClientCAs returns the pool of the CAs that sign client certificates
	// as of now (the file may be reloaded); nil: no client CA, and a client
	// certificate is no credential (but a member's, see PeerCAs).
	ClientCAs func() *x509.CertPool
	// CertRoles are the grants of a verified client certificate by its
	// subject's common name (auth_cert_roles).
	CertRoles map[string]access.Grants
	// PeerCAs returns the pool of the CA that signs the members' peer
	// certificates as of now; nil without peer TLS. With it and
	// MemberName, a current member's peer certificate may list the members,
	// as a joining member does (peerjoin.go).
	PeerCAs func() *x509.CertPool
	// MemberName names the current member a peer certificate identifies,
	// or fails (member.Member.CertificateMemberName).
	MemberName func(cert *x509.Certificate) (string, error)
}

// identity is an authenticated caller.
type identity struct {
	name   string // "token:NAME", "cert:CN" or "member:NAME"
	grants access.Grants
	// joining marks a member's peer certificate, which may only list the
	// members (peerjoin.go).
	joining bool
}

// authenticator authenticates and authorises every client RPC, gRPC and
// HTTP (through the gateway) alike.
type authenticator struct {
	enabled   bool
	tokens    Tokens                   // nil: no token is accepted
	clientCAs func() *x509.CertPool    // nil without client_ca_file; its pool verifies client certs
	certRoles map[string]access.Grants // by subject common name
	secret    string                   // the gateway connection's credential
	now       func() time.Time         // for tests
	onRefusal func(method, id string)  // logs, may be nil
	members   *memberCertificates      // joining members' peer certificates; nil without peer TLS
}

// newAuthenticator returns the authenticator of opts, with a new secret
// for the gateway's connections.
func newAuthenticator(opts AuthOptions) *authenticator {
	a := &authenticator{
		enabled: opts.Enabled, tokens: opts.Tokens, clientCAs: opts.ClientCAs, certRoles: opts.CertRoles,
		secret: NewToken(), now: time.Now,
	}
	if opts.PeerCAs != nil && opts.MemberName != nil {
		a.members = &memberCertificates{peerCAs: opts.PeerCAs, name: opts.MemberName}
	}
	return a
}

// unary is the unary server interceptor.
func (a *authenticator) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	ctx, err := a.authorize(ctx, info.FullMethod, req)
	if err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

// stream is the stream server interceptor (Watch, server reflection).
func (a *authenticator) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx, err := a.authorize(ss.Context(), info.FullMethod, nil)
	if err != nil {
		return err
	}
	return handler(srv, &identifiedStream{ServerStream: ss, ctx: ctx})
}

// identifiedStream is a server stream whose context names the caller.
type identifiedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *identifiedStream) Context() context.Context { return s.ctx }

// identityKey is the context key of the caller's identity.
type identityKey struct{}

// Anonymous is the principal of every request when authentication is off.
const Anonymous = "anonymous"

// principal returns who the authorized caller of ctx is: "token:NAME",
// "cert:CN", or Anonymous when authentication is off.
func principal(ctx context.Context) string {
	if id, ok := ctx.Value(identityKey{}).(identity); ok {
		return id.name
	}
	return Anonymous
}

// callerGrants returns what the authorized caller of ctx holds; ok is
// false when authentication is off (every caller may do everything).
func callerGrants(ctx context.Context) (grants access.Grants, ok bool) {
	id, ok := ctx.Value(identityKey{}).(identity)
	return id.grants, ok
}

// authorize authenticates the caller of method and checks its roles (and
// their scope, for the methods methodScope names; req is the request of a
// unary call, nil for a stream). It returns ctx with the caller's
// identity for principal.
func (a *authenticator) authorize(ctx context.Context, method string, req any) (context.Context, error) {
	if !a.enabled {
		return ctx, nil
	}
	id, err := a.authenticate(ctx)
	if err != nil {
		if a.onRefusal != nil {
			a.onRefusal(method, "")
		}
		return ctx, err
	}
	if id.joining {
		return a.authorizeJoining(ctx, method, id)
	}
	need, ok := methodRoles[method]
	if !ok || !id.grants.Has(need) {
		if a.onRefusal != nil {
			a.onRefusal(method, id.name)
		}
		if !ok {
			return ctx, status.Errorf(codes.PermissionDenied, "%s: method not open to clients (%s)", method, id.name)
		}
		return ctx, status.Errorf(codes.PermissionDenied, "%s needs role %s; %s has %s", shortMethod(method), need, id.name, id.grants.Held())
	}
	if err := checkMethodScope(method, req, need, id); err != nil {
		if a.onRefusal != nil {
			a.onRefusal(method, id.name)
		}
		return ctx, err
	}
	return context.WithValue(ctx, identityKey{}, id), nil
}

func shortMethod(m string) string {
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		return m[i+1:]
	}
	return m
}

// authenticate finds the caller's identity: a bearer token if one is sent,
// else a client certificate (the connection's, or, on the gateway's own
// connection, the one the HTTP listener received). Every credential sent
// must be valid.
func (a *authenticator) authenticate(ctx context.Context) (identity, error) {
	var chain []*x509.Certificate
	if gatewaySecretSent(ctx, a.secret) {
		if v := metadata.ValueFromIncomingContext(ctx, mdGatewayCert); len(v) == 1 {
			var err error
			if chain, err = decodeChain(v[0]); err != nil {
				return identity{}, status.Errorf(codes.Unauthenticated, "client certificate: %v", err)
			}
		}
	} else if p, ok := peer.FromContext(ctx); ok {
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok {
			chain = ti.State.PeerCertificates
		}
	}
	return a.identify(chain, metadata.ValueFromIncomingContext(ctx, "authorization"))
}

// authenticateHTTP is authenticate for a request the HTTP listener serves
// itself, outside the gateway (pprof): the Authorization header and the
// client certificate of its TLS connection.
func (a *authenticator) authenticateHTTP(r *http.Request) (identity, error) {
	var chain []*x509.Certificate
	if r.TLS != nil {
		chain = r.TLS.PeerCertificates
	}
	return a.identify(chain, r.Header.Values("Authorization"))
}

// identify returns the identity of the credentials a caller sent: the
// client certificate chain presented (leaf first; none: empty) and the
// values of its authorization header. A bearer token, if sent, wins over
// the certificate, which must still be valid. The errors are
// Unauthenticated statuses.
func (a *authenticator) identify(chain []*x509.Certificate, auth []string) (identity, error) {
	var certID *identity
	if len(chain) > 0 {
		var err error
		if certID, err = a.certCredential(chain); err != nil {
			return identity{}, err
		}
	}

	if len(auth) > 0 {
		if len(auth) > 1 {
			return identity{}, status.Error(codes.Unauthenticated, "more than one authorization header")
		}
		token, ok := strings.CutPrefix(auth[0], "Bearer ")
		if !ok {
			token, ok = strings.CutPrefix(auth[0], "bearer ")
		}
		if !ok || token == "" {
			return identity{}, status.Error(codes.Unauthenticated, "authorization: want \"Bearer TOKEN\"")
		}
		if a.tokens == nil {
			return identity{}, status.Error(codes.Unauthenticated, "bearer token refused: this server has no auth_token_file")
		}
		name, grants, ok := a.tokens.Lookup(strings.TrimSpace(token))
		if !ok {
			return identity{}, status.Error(codes.Unauthenticated, "bearer token refused: unknown token")
		}
		return identity{name: "token:" + name, grants: grants}, nil
	}
	if certID != nil {
		return *certID, nil
	}
	return identity{}, status.Error(codes.Unauthenticated, "authentication required: send a bearer token (--token) or a client certificate (--cert, --key)")
}

// certIdentity verifies a client certificate chain against the client CA
// and returns its subject's identity.
func (a *authenticator) certIdentity(chain []*x509.Certificate) (identity, error) {
	leaf := chain[0]
	cn := leaf.Subject.CommonName
	if a.clientCAs == nil {
		return identity{}, status.Errorf(codes.Unauthenticated, "client certificate %q refused: this server has no client_ca_file", cn)
	}
	now := a.now()
	if now.After(leaf.NotAfter) {
		return identity{}, status.Errorf(codes.Unauthenticated, "client certificate %q expired at %s", cn, leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	if now.Before(leaf.NotBefore) {
		return identity{}, status.Errorf(codes.Unauthenticated, "client certificate %q is not valid before %s", cn, leaf.NotBefore.UTC().Format(time.RFC3339))
	}
	if err := certchain.Verify(chain, a.clientCAs(), "", x509.ExtKeyUsageClientAuth); err != nil {
		return identity{}, status.Errorf(codes.Unauthenticated, "client certificate %q refused: %v", cn, err)
	}
	if err := checkPrincipalCN(cn); err != nil {
		return identity{}, err
	}
	return identity{name: "cert:" + cn, grants: a.certRoles[cn]}, nil
}

// checkPrincipalCN refuses the common name of a verified client
// certificate that holds a control or bidirectional formatting character
// (or a byte that is not UTF-8): the name becomes the principal that
// history, watch and the logs show with every change it makes, and such a
// character would act on the terminal that shows it instead of showing
// (erase a line, reorder one). Token names are held to access.CheckName,
// which refuses the same, when the token file is read. The answer is
// Unauthenticated, as for any credential refused: the certificate, not
// the request, is at fault.
func checkPrincipalCN(cn string) error {
	off := safetext.Index(cn)
	if off < 0 {
		return nil
	}
	return status.Errorf(codes.Unauthenticated, "client certificate %q refused: its common name holds %s at byte offset %d, "+
		"which would act on a terminal that shows the principal (history, watch); issue a certificate whose common name is printable",
		cn, safetext.Describe(cn, off), off)
}

func encodeChain(chain []*x509.Certificate) string {
	parts := make([]string, len(chain))
	for i, c := range chain {
		parts[i] = base64.StdEncoding.EncodeToString(c.Raw)
	}
	return strings.Join(parts, ",")
}

func decodeChain(s string) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for _, p := range strings.Split(s, ",") {
		der, err := base64.StdEncoding.DecodeString(p)
		if err != nil {
			return nil, err
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// gatewayCredential is the per-RPC credential of the gateway's own
// connection: the secret that makes the interceptor trust the client
// certificate the HTTP listener forwards.
type gatewayCredential struct{ secret string }

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (g gatewayCredential) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{mdGatewaySecret: g.secret}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials: the
// gateway's connections never leave this process (gateway.go).
func (gatewayCredential) RequireTransportSecurity() bool { return false }

// gatewayMetadata forwards the certificate the HTTP listener received (the
// TLS layer proved the caller holds its key; the interceptor verifies it).
func gatewayMetadata(_ context.Context, r *http.Request) metadata.MD {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil
	}
	return metadata.Pairs(mdGatewayCert, encodeChain(r.TLS.PeerCertificates))
}

// gatewayHeaderMatcher forwards HTTP headers as grpc-gateway does by
// default, except the ones that would pose as the gateway's own.
func gatewayHeaderMatcher(key string) (string, bool) {
	k := strings.ToLower(key)
	if strings.HasPrefix(k, mdPrefix) || strings.HasPrefix(k, "grpc-metadata-"+mdPrefix) || strings.HasPrefix(k, "grpcgateway-"+mdPrefix) {
		return "", false
	}
	return runtime.DefaultHeaderMatcher(key)
}
