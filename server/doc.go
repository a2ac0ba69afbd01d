// Package server assembles one metalog process from its configuration: a
// member, its client listeners and the handlers of package api that serve
// it, and (cql_addr, on by default) package cqlserver's CQL native protocol listener.
//
// It owns the operator's configuration file (Config, DefaultConfig,
// LoadConfigFile and the checks that name the setting at fault), the TLS
// material of every listener and the bearer-token file (their file modes
// checked, reloaded on SIGHUP and when the files change), the client
// listeners with their connection caps and timeouts, the profiler, and the
// order in which a process starts and stops. It does not own what a
// request does (package api) nor the raft log, the state machine and the
// peer port (package member).
//
// Close drains in the reverse order of Start: the change feeds end at
// once, the servers (the CQL listener among them) stop accepting and
// finish what is in flight within Close's context, then the member closes
// with a synchronous flush of the schema store.
//
//	cfg := server.DefaultConfig()
//	if err := cfg.LoadConfigFile("metalog.yaml"); err != nil {
//		return err
//	}
//	srv, err := server.Start(cfg, logger)
//	if err != nil {
//		return err
//	}
//	defer srv.Close(ctx)
package server
