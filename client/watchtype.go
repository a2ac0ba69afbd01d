package client

import pb "github.com/metalog/metalog/api/metalogpb"

// WatchType is the type of a watch message. The wire carries it as the
// string WatchResponse.Type (the HTTP API's "type"), which keeps members and
// clients of different versions compatible; WatchTypeOf gives it this type
// so that a program switches over the constants below.
type WatchType string

// Types of a watch message.
const (
	// WatchEvents is a message with the changes of one or more
	// consecutive epochs (up to 64, when the stream catches up): Events
	// holds them in epoch order, the statements of one atomic request
	// together, and Epoch is the last epoch the message covers, which may
	// be past the last event's when the epochs after it held nothing that
	// matched the request's filter.
	WatchEvents WatchType = "events"
	// WatchProgress says the member has reached Epoch with nothing (more)
	// to send up to it: the first message of a watch from now, and what
	// an idle watch sends every watch_progress_interval (5s by default).
	WatchProgress WatchType = "progress"
	// WatchResync replaces the changes the member no longer keeps: Cql is
	// the whole (filtered) schema at Epoch, which replaces whatever the
	// consumer had, and the changes after Epoch follow.
	WatchResync WatchType = "resync"
)

// WatchTypeOf returns the type of m (the empty type for nil). A type that
// is not one of the constants above comes from a newer member: a consumer
// that keeps a copy of the schema should stop on it (see Known) rather
// than skip a message it cannot read.
func WatchTypeOf(m *pb.WatchResponse) WatchType { return WatchType(m.GetType()) }

// Known reports whether t is WatchEvents, WatchProgress or WatchResync.
func (t WatchType) Known() bool {
	switch t {
	case WatchEvents, WatchProgress, WatchResync:
		return true
	}
	return false
}
