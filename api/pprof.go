package api

import (
	"fmt"
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/access"
)

// PprofPath is where Options.Profiler (Go's profiler, enable_pprof) is
// served on the HTTP listener.
const PprofPath = "/debug/pprof/"

// withPprof returns h with profiler under PprofPath: for callers with the
// unscoped operator role when authentication is on (refusals counted by
// refused), open otherwise (package server allows that on loopback only).
// Without a profiler, h alone (which answers the path with a 404).
func withPprof(profiler http.Handler, auth *authenticator, refused func(reason string), h http.Handler) http.Handler {
	if profiler == nil {
		return h
	}
	guarded := profiler
	if auth.enabled {
		guarded = operatorOnly(auth, refused, profiler)
	}
	mux := http.NewServeMux()
	mux.Handle("/", h)
	mux.Handle(PprofPath, guarded)
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
				PprofPath, RoleOperator, id.name, id.grants.Held()))
			return
		}
		next.ServeHTTP(w, r)
	})
}
