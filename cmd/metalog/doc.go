// Command metalog is metalog's one binary: `metalog serve` runs a member,
// and the other subcommands talk to a cluster, check files offline or
// measure it.
//
// It owns the flags, the output formats and the exit codes, and no logic:
// serve is package server's Start with the config file under the flags;
// the subcommands that talk to a cluster go through package client, the
// offline ones (backup status and restore, check data-dir) through package
// member, diff -f through schema/plan, bench through package bench and
// token through package api. It imports neither raftlog, metadata,
// snapshot nor schema/cql. README.md has every subcommand with examples.
package main
