package api

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// codeOf maps an error from the layers below to the one gRPC code the
// contract gives it; the gateway turns that code into the HTTP status.
func codeOf(err error) codes.Code {
	var syn *cql.SyntaxError
	switch {
	case errors.As(err, &syn),
		errors.Is(err, schema.ErrInvalid),
		errors.Is(err, metadata.ErrEmptyCommand):
		return codes.InvalidArgument
	case errors.Is(err, guardrails.ErrFailed):
		return codes.FailedPrecondition
	case errors.Is(err, guardrails.ErrInvalidSetting), errors.Is(err, guardrails.ErrUnknownSetting):
		return codes.InvalidArgument
	case errors.Is(err, schema.ErrAlreadyExists):
		return codes.AlreadyExists
	case errors.Is(err, schema.ErrNotFound):
		return codes.NotFound
	case errors.Is(err, raftlog.ErrNoLeader), errors.Is(err, raftlog.ErrStopped), errors.Is(err, raftlog.ErrLeaderChanged),
		errors.Is(err, metadata.ErrStateMachineClosed), errors.Is(err, errNotCommitted):
		return codes.Unavailable
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	}
	return codes.Internal
}

// toStatus turns err into a gRPC status error, keeping its message.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Error(codeOf(err), err.Error())
}

// errNotCommitted marks a proposal the cluster did not commit within the
// request deadline although it had a leader: no quorum.
var errNotCommitted = errors.New("not committed within the request deadline (no quorum?)")
