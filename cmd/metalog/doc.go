// Command metalog is metalog's one binary: `metalog serve` runs a member
// (server.Start, with the config file under the flags), the client
// subcommands (exec, describe, watch, history, cluster, guardrails) talk
// to a cluster through package client, `metalog bench` runs package
// bench, and `metalog token` makes bearer tokens for auth_token_file.
//
// It owns the flags, the output formats and the exit codes; no logic
// beyond wiring the flags to the packages that do the work (it imports
// neither raftlog, metadata, snapshot nor schema/cql). See README.md for
// every subcommand with examples.
//
//	metalog serve --data-dir d1 --name n1
//	metalog exec --endpoints 127.0.0.1:7070 -e "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"
package main
