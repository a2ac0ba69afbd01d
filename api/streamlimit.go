package api

import (
	"fmt"
	"strconv"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
)

// reasonTooManyStreams is the ErrorInfo reason of a stream refused by
// max_watch_streams (Unavailable) or max_watch_streams_per_identity
// (ResourceExhausted); its metadata names the setting ("setting") and, for
// the second, the identity.
const reasonTooManyStreams = "TOO_MANY_STREAMS"

// limitedStreams are the methods whose streams stay open long (a watch
// until its client ends it, a backup download for as long as the client
// takes to read it) and so count against the stream limits. Server
// reflection, a short exchange, does not.
var limitedStreams = map[string]bool{
	"/metalog.v1.MetadataService/Watch":        true,
	"/metalog.v1.MetadataService/Backup":       true,
	"/metalog.v1.MetadataService/SaveSnapshot": true,
}

// streamLimits counts the long-lived streams open on this member, over
// gRPC and HTTP alike (the gateway's calls come through the same
// interceptors), in all and by identity, and refuses one past a limit at
// once: a flood of watches from one reader can neither take every stream
// of the member nor keep another identity's requests from an answer.
// Its methods are safe for concurrent use.
type streamLimits struct {
	perIdentity, total int

	mu         sync.Mutex     // guards open and byIdentity
	open       int            // streams open
	byIdentity map[string]int // open streams by identity; no zero counts
}

func newStreamLimits(total, perIdentity int) *streamLimits {
	return &streamLimits{total: total, perIdentity: perIdentity, byIdentity: map[string]int{}}
}

// acquire counts a stream of identity for method, or refuses it: with
// ResourceExhausted when the identity has perIdentity streams open, with
// Unavailable when the member has total open (another member may have
// room). The caller calls release once the stream ends.
func (l *streamLimits) acquire(method, identity string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := l.byIdentity[identity]; n >= l.perIdentity {
		return withInfo(codes.ResourceExhausted, fmt.Sprintf(
			"%s: %s has %d streams (watches and backup downloads) open on this member, the limit of max_watch_streams_per_identity; nothing was opened: end one of them first, or raise max_watch_streams_per_identity",
			shortMethod(method), identity, n), reasonTooManyStreams,
			map[string]string{"setting": "max_watch_streams_per_identity", "identity": identity, "limit": strconv.Itoa(l.perIdentity)})
	}
	if l.open >= l.total {
		return withInfo(codes.Unavailable, fmt.Sprintf(
			"%s: this member has %d streams (watches and backup downloads) open, the limit of max_watch_streams; nothing was opened: use another member, or raise max_watch_streams",
			shortMethod(method), l.open), reasonTooManyStreams,
			map[string]string{"setting": "max_watch_streams", "limit": strconv.Itoa(l.total)})
	}
	l.open++
	l.byIdentity[identity]++
	return nil
}

// release uncounts a stream that acquire counted.
func (l *streamLimits) release(identity string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byIdentity[identity]--; l.byIdentity[identity] <= 0 {
		delete(l.byIdentity, identity)
	}
}

// stream is the stream server interceptor, after authentication (it
// counts by the authenticated principal): it refuses a limited stream
// past a limit before its handler runs, so nothing of it starts.
func (l *streamLimits) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if !limitedStreams[info.FullMethod] {
		return handler(srv, ss)
	}
	id := principal(ss.Context())
	if err := l.acquire(info.FullMethod, id); err != nil {
		return err
	}
	defer l.release(id)
	return handler(srv, ss)
}
