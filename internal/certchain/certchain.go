package certchain

import (
	"crypto/x509"
	"errors"
)

// Verify verifies a presented chain (leaf first) against pool at the
// current time, for usage, and for host when not empty.
func Verify(chain []*x509.Certificate, pool *x509.CertPool, host string, usage x509.ExtKeyUsage) error {
	if len(chain) == 0 {
		return errors.New("no certificate presented")
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	_, err := chain[0].Verify(x509.VerifyOptions{
		Roots: pool, Intermediates: inter, DNSName: host,
		KeyUsages: []x509.ExtKeyUsage{usage},
	})
	return err
}
