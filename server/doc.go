// Package server assembles one metalog process from its configuration: a
// member, its client listeners and the handlers of package api that serve
// them.
//
// It owns the operator's configuration file (Config: the keys, their
// defaults in DefaultConfig, LoadConfigFile and the checks that name the
// setting that is wrong), the TLS material of every listener and the
// bearer-token file (read with their file modes checked, and reloaded on
// SIGHUP through Server.ReloadCertificates and when the files change),
// the client listeners with their connection caps (worked out from the
// open-file limit) and timeouts, the profiler (enable_pprof), and the
// order in which a process starts and stops.
//
// Start checks the config, loads the security material, binds the gRPC
// and HTTP listeners, starts a member.Member with the member's part of
// the config, builds the handlers (api.New) with the limits, the loaded
// tokens and CAs, and serves: the client gRPC server
// (api.Handlers.NewGRPCServer, with this package's TLS and keepalive
// options) and the HTTP side (api.Handlers.NewGateway). Close drains in
// the reverse order: the change feeds end at once, the HTTP and gRPC
// servers finish what is in flight (bounded by its context), then the
// member closes (a synchronous flush of the schema store).
//
// It does not own what a request does: authentication and roles, the
// request limits, the gateway and the handlers are api's; the raft log,
// the state machine and the peer port are the member's.
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
