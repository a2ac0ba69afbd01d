package main

import (
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// reasonIfEpochConflict is the ErrorInfo reason of a request refused
// because the schema is not at its if_epoch: nothing of it applied.
const reasonIfEpochConflict = "IF_EPOCH_CONFLICT"

// ifEpochConflict reports whether the cluster refused a request because
// the schema is not at its if_epoch: FailedPrecondition with the ErrorInfo
// reason IF_EPOCH_CONFLICT, or, from members that give that refusal no
// ErrorInfo, FailedPrecondition with none (their other FailedPrecondition
// answers, guardrail failures, carry one). Once the client has a sentinel
// for the reason, errors.Is with it replaces this.
func ifEpochConflict(err error) bool {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.FailedPrecondition {
		return false
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == "metalog" {
			return info.GetReason() == reasonIfEpochConflict
		}
	}
	return true
}
