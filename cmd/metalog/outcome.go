package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/internal/safetext"
)

// The exit codes of metalog, as the README's CLI section and the root
// command's help list them: 0 ok, 1 failure, 2 changes pending (plan
// --detailed-exitcode only), 3 outcome unknown.
const (
	exitFailure        = 1
	exitChangesPending = 2
	exitOutcomeUnknown = 3
)

// errChangesPending is how plan --detailed-exitcode ends when its plan has
// statements: not a failure, so nothing is printed, but exit code 2, as
// Terraform's plan -detailed-exitcode.
var errChangesPending = errors.New("changes pending")

// exitCodesHelp is the exit-code paragraph of the help of the commands
// that change the cluster.
const exitCodesHelp = `Exit codes: 0 applied, 1 failed (nothing of it applied, or the error says
which statements did), 3 outcome unknown: the change was proposed and may
still apply (the member that had it went away, or lost its quorum, before it
applied). The message names the request id; "metalog request ID" says what
became of it, and sending the request again with that request id applies it
at most once.`

// exitCode is the exit code of a command that failed with err.
func exitCode(err error) int {
	if errors.Is(err, client.ErrOutcomeUnknown) {
		return exitOutcomeUnknown
	}
	if errors.Is(err, errChangesPending) {
		return exitChangesPending
	}
	return exitFailure
}

// outcomeUnknownError is how a client command reports a change that may
// still apply: the client's error with, for the terminal, the request id
// and the commands that learn and settle what happened. It matches
// client.ErrOutcomeUnknown, so the command exits 3.
type outcomeUnknownError struct {
	err *client.OutcomeUnknownError
	// endpoints are the command's --endpoints, for the command it
	// suggests.
	endpoints string
	// retryFlag is the flag that sends the request again under its id
	// ("--request-id"), "" when the command has none.
	retryFlag string
}

func (e *outcomeUnknownError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "DeadlineExceeded: %s\n", safetext.Line(status.Convert(e.err).Message()))
	if e.err.RequestID == "" {
		fmt.Fprintf(&b, "the change may still apply (exit code 3)\nlearn what happened: metalog cluster status --endpoints %s", e.endpoints)
		return b.String()
	}
	id := safetext.Field(e.err.RequestID) // quoted as a shell reads it back when it holds a space
	fmt.Fprintf(&b, "the change may still apply (exit code 3); request id %s\nlearn what happened: metalog request %s", id, id)
	if e.err.AppliedIndex != 0 {
		fmt.Fprintf(&b, " --after-index %d", e.err.AppliedIndex)
	}
	fmt.Fprintf(&b, " --endpoints %s", e.endpoints)
	if e.retryFlag != "" {
		fmt.Fprintf(&b, "\nsettle it: send the same request again with %s %s (it applies at most once)", e.retryFlag, id)
	}
	return b.String()
}

func (e *outcomeUnknownError) Unwrap() error { return e.err }

// commandError is the error a client command cmd, run against endpoints,
// reports for err: an *outcomeUnknownError for a change that may still
// apply, otherwise "Code: message" (describeErr).
func commandError(cmd *cobra.Command, endpoints string, err error) error {
	var oe *client.OutcomeUnknownError
	if !errors.As(err, &oe) {
		return describeErr(err)
	}
	retry := ""
	if cmd != nil && cmd.Flags().Lookup("request-id") != nil {
		retry = "--request-id"
	}
	return &outcomeUnknownError{err: oe, endpoints: endpoints, retryFlag: retry}
}
