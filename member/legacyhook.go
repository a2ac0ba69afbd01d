//go:build metalog_faults

package member

import (
	"os"
	"time"
)

// LegacyHistoryEnv names the environment variable a metalog_faults build
// reads at start-up: set to 1, a bootstrap records no history naming in
// the new log, as versions before history names did, so that the
// integration tests can make the data dirs of a cluster to upgrade with
// the binary under test. A build without the tag has legacyhook_off.go
// instead and reads nothing.
const LegacyHistoryEnv = "METALOG_LEGACY_HISTORY"

// HoldHistoryNameEnv names the environment variable a metalog_faults
// build reads at start-up: the path of a file whose creation lets the
// member name its cluster's history, which it does not do before (the
// integration tests see a cluster before its history is named).
const HoldHistoryNameEnv = "METALOG_HOLD_HISTORY_NAME_FILE"

// holdPoll is how often a held member looks for the file of
// HoldHistoryNameEnv.
const holdPoll = 20 * time.Millisecond

// holdHistoryName returns what keeps the member configured by cfg from
// naming its history until it is closed: Config.holdHistoryName (this
// package's tests), else, when HoldHistoryNameEnv names a file, a channel
// closed once that file exists (looked for until stop is closed), else
// nil (nothing holds it).
func holdHistoryName(cfg *Config, stop <-chan struct{}) <-chan struct{} {
	if cfg.holdHistoryName != nil {
		return cfg.holdHistoryName
	}
	path := os.Getenv(HoldHistoryNameEnv)
	if path == "" {
		return nil
	}
	cfg.Logger.Warn("history naming held: this test build names its cluster's history only once the file exists (build tag metalog_faults)", "file", path)
	held := make(chan struct{})
	go func() {
		tick := time.NewTicker(holdPoll)
		defer tick.Stop()
		for {
			if _, err := os.Stat(path); err == nil {
				close(held)
				return
			}
			select {
			case <-tick.C:
			case <-stop:
				return
			}
		}
	}()
	return held
}

// legacyHistory reports whether a bootstrap of a member configured by
// cfg records no history naming: Config.legacyHistory (this package's tests), or LegacyHistoryEnv set
// to 1.
func legacyHistory(cfg *Config) bool {
	if cfg.legacyHistory {
		return true
	}
	if os.Getenv(LegacyHistoryEnv) != "1" {
		return false
	}
	cfg.Logger.Warn("legacy history enabled: this test build bootstraps clusters that do not name their histories, as versions before history names did (build tag metalog_faults)", "env", LegacyHistoryEnv)
	return true
}
