// Package certchain verifies a certificate chain a peer presented against
// a CA pool of the moment, for one key usage and optionally one host.
//
// The listeners of a member ask for certificates without verifying them
// in the handshake (package server's TLS material, reloaded from files),
// and check them afterwards against the pool current at that time
// (package api's authenticator, and server's dialer of peers):
//
//	if err := certchain.Verify(chain, pool, "", x509.ExtKeyUsageClientAuth); err != nil {
//		return err
//	}
package certchain
