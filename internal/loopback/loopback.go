package loopback

import (
	"net"
	"strings"
)

// Is reports whether a host:port is on loopback only. An empty host or an
// unspecified address (0.0.0.0, ::) means everywhere; a host name other
// than localhost counts as not loopback.
func Is(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
