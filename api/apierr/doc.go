// Package apierr is the one table from the errors of a member to what a
// listener answers: it classifies any error of package member and of the
// layers below it (metadata, schema, schema/cql, guardrails, raftlog,
// context) into a Class, and maps each class to the gRPC code the API
// answers with (from which the HTTP gateway derives the HTTP status, with
// the table's overrides), the google.rpc.ErrorInfo reason it carries,
// and the label it counts under in metalog_requests_refused_total.
//
// The gRPC and HTTP listeners answer with Status:
//
//	resp, err := m.Execute(ctx, req)
//	if err != nil {
//		return nil, apierr.Status(err)
//	}
//
// A listener of another protocol (the CQL native protocol) reuses the
// classification and maps the classes to its own error codes:
//
//	switch apierr.Classify(err) {
//	case apierr.Syntax:
//		// SYNTAX_ERROR
//	case apierr.AlreadyExists:
//		// ALREADY_EXISTS
//	...
//	}
//
// The member words its own refusals (member.ArgumentError,
// member.PreconditionError, ...): those are answered with their message and
// the code of their kind only, whatever they wrap; a peer's answer the
// member relays (member.PeerError) is answered as the peer gave it.
package apierr
