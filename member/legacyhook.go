//go:build metalog_faults

package member

import "os"

// LegacyHistoryEnv names the environment variable a metalog_faults build
// reads at start-up: set to 1, a bootstrap records no history naming in
// the new log, as versions before history names did, so that the
// integration tests can make the data dirs of a cluster to upgrade with
// the binary under test. A build without the tag has legacyhook_off.go
// instead and reads nothing.
const LegacyHistoryEnv = "METALOG_LEGACY_HISTORY"

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
