package client

import (
	"time"

	"github.com/metalog/metalog/internal/retryinfo"
)

// RetryAfter returns how long the server asks the caller to wait before
// sending a refused request again: the google.rpc.RetryInfo of the error,
// which a member sends with the ResourceExhausted answer of its rate limit
// per identity (ddl_rate_per_identity). A request sent after that delay
// is admitted unless the same identity sent others meanwhile. ok is false
// for an error without one (or nil).
//
// The Client never waits and retries such an answer by itself: the
// request was refused whole, and whether to wait (a deploy job), give up
// (someone at a terminal) or send fewer changes is the caller's decision;
// a retry hidden in the client would also hide that the caller is over
// its rate, and would hold the call for as long as the delay.
func RetryAfter(err error) (time.Duration, bool) { return retryinfo.Of(err) }
