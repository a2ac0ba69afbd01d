//go:build !metalog_faults

package member

// legacyHistory reports whether a bootstrap records no history naming:
// Config.legacyHistory (this package's tests) only. A build without the
// metalog_faults tag, as every production binary is, reads nothing from
// its environment (legacyhook.go): every cluster it begins names its
// history.
func legacyHistory(cfg *Config) bool { return cfg.legacyHistory }

// holdHistoryName returns what keeps the member configured by cfg from
// naming its history until it is closed: Config.holdHistoryName (this
// package's tests) only; nil holds nothing.
func holdHistoryName(cfg *Config, _ <-chan struct{}) <-chan struct{} { return cfg.holdHistoryName }
