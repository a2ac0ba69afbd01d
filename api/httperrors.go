package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The ErrorInfo detail of a request refused by the statement limit, which
// tells the HTTP side to answer 413 rather than the 429 of other
// ResourceExhausted answers: the same request would be refused again.
const (
	errorDomain             = "metalog"
	reasonTooManyStatements = "TOO_MANY_STATEMENTS"
)

// tooManyStatements returns the status of a request refused by the
// statement limit: ResourceExhausted with the member's message and the
// ErrorInfo detail.
func tooManyStatements(err error) error {
	st := status.New(codes.ResourceExhausted, err.Error())
	if with, derr := st.WithDetails(&errdetails.ErrorInfo{Reason: reasonTooManyStatements, Domain: errorDomain,
		Metadata: map[string]string{"setting": "max_statements_per_request"}}); derr == nil {
		st = with
	}
	return st.Err()
}

// isTooManyStatements reports whether err carries the detail of
// tooManyStatements.
func isTooManyStatements(err error) bool {
	st, ok := status.FromError(err)
	if !ok {
		return false
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == errorDomain && info.GetReason() == reasonTooManyStatements {
			return true
		}
	}
	return false
}

// gatewayError is the gateway's error handler: grpc-gateway's, except that
// the statement limit is 413 Content Too Large.
func gatewayError(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	if isTooManyStatements(err) {
		err = &runtime.HTTPStatusError{HTTPStatus: http.StatusRequestEntityTooLarge, Err: err}
	}
	runtime.DefaultHTTPErrorHandler(ctx, mux, m, w, r, err)
}

// routingError answers the requests the gateway matches to no route: 405
// with an Allow header listing the methods of the path when it has other
// methods (grpc-gateway would answer 501 without it), 404 otherwise.
func (rt *routes) routingError(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, httpStatus int) {
	switch httpStatus {
	case http.StatusMethodNotAllowed:
		allowed := rt.allowed(r)
		if len(allowed) == 0 {
			break
		}
		methods := make([]string, len(allowed))
		for i, ro := range allowed {
			methods[i] = ro.method
		}
		w.Header().Set("Allow", strings.Join(methods, ", "))
		err := status.Errorf(codes.Unimplemented, "method %.20q is not allowed on %s; it takes %s", r.Method, allowed[0].pattern, strings.Join(methods, ", "))
		runtime.HTTPError(ctx, mux, m, w, r, &runtime.HTTPStatusError{HTTPStatus: httpStatus, Err: err})
		return
	case http.StatusNotFound:
		runtime.HTTPError(ctx, mux, m, w, r, status.Error(codes.NotFound, notFoundMessage(r)))
		return
	}
	runtime.DefaultRoutingErrorHandler(ctx, mux, m, w, r, httpStatus)
}

func notFoundMessage(r *http.Request) string {
	return fmt.Sprintf("no such path %.200q", r.URL.Path)
}

// notFound answers the paths outside /v1 that the HTTP listener does not
// serve, as the gateway answers those under /v1.
func notFound(w http.ResponseWriter, r *http.Request) {
	httpError(w, http.StatusNotFound, codes.NotFound, notFoundMessage(r))
}

// httpError answers in the gateway's error form, {"code", "message",
// "details"}, with the gateway's JSON codec.
func httpError(w http.ResponseWriter, httpStatus int, code codes.Code, msg string) {
	b, err := newJSONMarshaler().Marshal(status.New(code, msg).Proto())
	if err != nil {
		b = []byte(`{"code":13,"message":"failed to marshal error message","details":[]}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpStatus)
	w.Write(b)
}
