package schema

import (
	"strconv"
	"strings"

	"github.com/metalog/metalog/internal/clip"
)

// Canonical replication strategy class names.
const (
	// SimpleStrategy places replicas without regard to topology.
	SimpleStrategy = "org.apache.cassandra.locator.SimpleStrategy"
	// NetworkTopologyStrategy places a number of replicas per data centre.
	NetworkTopologyStrategy = "org.apache.cassandra.locator.NetworkTopologyStrategy"
)

// locatorPrefix is the package of Cassandra's strategies, which class
// names may leave out.
const locatorPrefix = "org.apache.cassandra.locator."

// NormalizeReplication validates r and returns it in canonical form: the
// fully qualified class name and factors written as plain decimal integers.
// It accepts short class names ("SimpleStrategy") and is case-insensitive on
// the class. SimpleStrategy needs exactly replication_factor, a positive
// integer; NetworkTopologyStrategy takes data centre names mapped to
// non-negative factors (and replication_factor as the default for all data
// centres); other classes are refused. The reason is empty when r is
// valid.
func NormalizeReplication(r Replication) (Replication, string) {
	class := r.Class
	if strings.HasPrefix(strings.ToLower(class), strings.ToLower(locatorPrefix)) {
		class = class[len(locatorPrefix):]
	}
	var out Replication
	switch strings.ToLower(class) {
	case "":
		return out, "missing replication strategy class"
	case "simplestrategy":
		out.Class = SimpleStrategy
		rf, ok := r.Options["replication_factor"]
		if !ok {
			return out, "SimpleStrategy requires the replication_factor option"
		}
		for k := range r.Options {
			if k != "replication_factor" {
				return out, "unrecognized strategy option " + clip.Quote(k) + " for SimpleStrategy"
			}
		}
		n, err := strconv.Atoi(strings.TrimSpace(rf))
		if err != nil || n < 0 {
			// 0 is a keyspace without replicas, which Cassandra takes.
			return out, "replication_factor must be a non-negative integer, not " + clip.Quote(rf)
		}
		out.Options = map[string]string{"replication_factor": strconv.Itoa(n)}
	case "networktopologystrategy":
		out.Class = NetworkTopologyStrategy
		if len(r.Options) > 0 {
			out.Options = make(map[string]string, len(r.Options))
		}
		for _, k := range sortedKeys(r.Options) {
			v := r.Options[k]
			if k == "" {
				return out, "empty data centre name"
			}
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 0 {
				return out, "replication factor for " + clip.Quote(k) + " must be a non-negative integer, not " + clip.Quote(v)
			}
			out.Options[k] = strconv.Itoa(n)
		}
	default:
		return out, "unknown replication strategy class " + clip.Quote(r.Class)
	}
	return out, ""
}
