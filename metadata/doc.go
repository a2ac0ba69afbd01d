// Package metadata holds ClusterMetadata, the immutable view of the
// cluster's schema at one epoch, and the StateMachine that applies committed
// log commands to it, persists the changes in a bbolt schema store and
// publishes each new view atomically.
//
// Readers never lock:
//
//	m := sm.Current()
//	t, ok := m.Schema.Table("shop", "orders")
//
// The raft loop applies committed entries in batches:
//
//	results, err := sm.Apply([]metadata.Entry{{Index: i, Data: cmd.Marshal(nil)}})
//
// Every node computes the same result from the same entries: nothing on the
// apply path reads the clock or random numbers, and nothing walks all tables.
package metadata
