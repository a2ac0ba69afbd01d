package api

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/pprof"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/access"
	"github.com/metalog/metalog/internal/loopback"
)

// pprofPath is where Go's profiler is served on the HTTP listener when
// enable_pprof is set.
const pprofPath = "/debug/pprof/"

// errPprofExposed refuses a start that would serve the profiler to anyone
// who reaches a non-loopback HTTP listener.
var errPprofExposed = errors.New("pprof refused")

// validatePprof refuses enable_pprof with authentication off on an HTTP
// listener that is not on loopback: the profiler shows the command line
// (with its flags), every goroutine's stack and the heap, and a CPU
// profile or a trace costs the member CPU while it runs, so it is served
// either to the operator role (authentication on) or on loopback only.
func (c *Config) validatePprof() error {
	if !c.EnablePprof || c.authEnabled() || loopback.Is(c.HTTPAddr) {
		return nil
	}
	return fmt.Errorf("config: %w: enable_pprof (--enable-pprof) would serve %s on http_addr %s, which is not a loopback address, to anyone who reaches it, "+
		"without authentication (it shows the command line, every goroutine's stack and memory, and profiles cost CPU): "+
		"bind http_addr to loopback, or turn on authentication (auth_token_file or client_ca_file; the profiler then needs the operator role)",
		errPprofExposed, pprofPath, c.HTTPAddr)
}

// logPprof says at start who can reach the profiler, when it is on: a WARN
// in both cases, since it shows the process's inner state.
func logPprof(cfg *Config, authOn bool, logger *slog.Logger) {
	if !cfg.EnablePprof {
		return
	}
	if authOn {
		logger.Warn("pprof is on (enable_pprof): "+pprofPath+" on the HTTP listener answers callers with the operator role for every keyspace only; "+
			"it shows the command line, every goroutine's stack and memory", "http_addr", cfg.HTTPAddr)
		return
	}
	logger.Warn("pprof is on (enable_pprof) without authentication: "+pprofPath+" on the loopback HTTP listener answers every user and process of this machine; "+
		"it shows the command line, every goroutine's stack and memory", "http_addr", cfg.HTTPAddr)
}

// withPprof returns h with Go's profiler under pprofPath when cfg enables
// it: for callers with the unscoped operator role when authentication is
// on (refusals counted by refused), open otherwise (validatePprof allows
// that on loopback only). Without enable_pprof, h alone (which answers the
// path with a 404).
func withPprof(cfg *Config, auth *authenticator, refused func(reason string), h http.Handler) http.Handler {
	if !cfg.EnablePprof {
		return h
	}
	prof := http.NewServeMux()
	prof.HandleFunc(pprofPath, pprof.Index)
	prof.HandleFunc(pprofPath+"cmdline", pprof.Cmdline)
	prof.HandleFunc(pprofPath+"profile", pprof.Profile)
	prof.HandleFunc(pprofPath+"symbol", pprof.Symbol)
	prof.HandleFunc(pprofPath+"trace", pprof.Trace)
	var guarded http.Handler = prof
	if auth.enabled {
		guarded = operatorOnly(auth, refused, prof)
	}
	mux := http.NewServeMux()
	mux.Handle("/", h)
	mux.Handle(pprofPath, guarded)
	return mux
}

// operatorOnly serves next to callers that hold the operator role for
// every keyspace: the profiler shows the whole process, so a scoped
// operator (operator@shop) is refused it. No or bad credentials: 401; a
// caller without the role: 403; both in the gateway's error form.
func operatorOnly(auth *authenticator, refused func(reason string), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := auth.authenticateHTTP(r)
		if err != nil {
			refused(refusedUnauthenticated)
			httpError(w, http.StatusUnauthorized, codes.Unauthenticated, status.Convert(err).Message())
			return
		}
		if !id.grants.Unscoped(access.Operator) {
			refused(refusedPermissionDenied)
			httpError(w, http.StatusForbidden, codes.PermissionDenied, fmt.Sprintf(
				"%s needs role %s for every keyspace (the profiler shows the whole process); %s has %s",
				pprofPath, RoleOperator, id.name, rolesString(id.grants)))
			return
		}
		next.ServeHTTP(w, r)
	})
}
