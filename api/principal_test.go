package api

import (
	"context"
	"crypto/x509"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestCertificateCNWithUnprintableCharactersRefused: a client certificate
// of the client CA whose common name holds a control or bidirectional
// formatting character is refused (Unauthenticated) with the byte offset,
// directly and through the gateway, before any method runs: its principal
// would act on the terminal that shows it.
func TestCertificateCNWithUnprintableCharactersRefused(t *testing.T) {
	f := newAuthFixture(t)
	for _, tc := range []struct{ cn, want string }{
		{"app\x1b[2K\rcert:admin", `client certificate "app\x1b[2K\rcert:admin" refused: its common name holds a control character (U+001B) at byte offset 3`},
		{"app\u202enimda", "holds a bidirectional formatting character (U+202E) at byte offset 3"},
		{"app\u0085", "holds a control character (U+0085) at byte offset 3"},
	} {
		leaf := f.ca.Issue(t, tc.cn).TLS.Leaf
		if leaf.Subject.CommonName != tc.cn {
			t.Fatalf("the certificate's CN is %q, want %q", leaf.Subject.CommonName, tc.cn)
		}
		chain := []*x509.Certificate{leaf}
		gw := tlsCtx(nil, map[string][]string{mdGatewaySecret: {f.a.secret}, mdGatewayCert: {encodeChain(chain)}})
		for name, ctx := range map[string]context.Context{"direct": tlsCtx(chain, nil), "gateway": gw} {
			_, err := f.a.authorize(ctx, "/metalog.v1.MetadataService/Execute", nil)
			if status.Code(err) != codes.Unauthenticated || !strings.Contains(status.Convert(err).Message(), tc.want) {
				t.Errorf("%s, CN %q: %v; want Unauthenticated saying %q", name, tc.cn, err, tc.want)
			}
		}
	}
}
