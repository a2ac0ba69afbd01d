package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/pprof"

	"github.com/metalog/metalog/api"
	"github.com/metalog/metalog/internal/loopback"
)

// pprofPath is where Go's profiler is served on the HTTP listener when
// enable_pprof is set.
const pprofPath = api.PprofPath

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

// profiler is Go's profiler under pprofPath when cfg enables it, nil
// otherwise (the HTTP side then answers the path with a 404). The HTTP
// side guards it (api.Options.Profiler): the unscoped operator role with
// authentication on, open otherwise (validatePprof allows that on
// loopback only).
func profiler(cfg *Config) http.Handler {
	if !cfg.EnablePprof {
		return nil
	}
	prof := http.NewServeMux()
	prof.HandleFunc(pprofPath, pprof.Index)
	prof.HandleFunc(pprofPath+"cmdline", pprof.Cmdline)
	prof.HandleFunc(pprofPath+"profile", pprof.Profile)
	prof.HandleFunc(pprofPath+"symbol", pprof.Symbol)
	prof.HandleFunc(pprofPath+"trace", pprof.Trace)
	return prof
}
