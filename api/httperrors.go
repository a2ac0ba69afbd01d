package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/api/apierr"
	"github.com/metalog/metalog/internal/retryinfo"
)

// exhausted returns the ResourceExhausted status of err, with the
// ErrorInfo detail of reason naming the setting behind it.
func exhausted(err error, reason, setting string) error {
	return withInfo(codes.ResourceExhausted, err.Error(), reason, map[string]string{"setting": setting})
}

// errorInfoReason returns the reason of err's metalog ErrorInfo detail, ""
// without one.
func errorInfoReason(err error) string { return apierr.ReasonOf(err) }

// gatewayError is the gateway's error handler: grpc-gateway's, except
// for the HTTP statuses apierr's table overrides by ErrorInfo reason (the
// statement limit is 413 Content Too Large, the NOSPACE alarm 507
// Insufficient Storage: apierr.HTTPStatus), the body of an
// outcome-unknown answer (504, outcomeUnknownError), and that an answer
// with a RetryInfo (the rate limit per identity, 429) has its delay in a
// Retry-After header.
func gatewayError(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	if d, ok := retryinfo.Of(err); ok {
		w.Header().Set("Retry-After", retryAfterHeader(d))
	}
	reason := errorInfoReason(err)
	if reason == reasonOutcomeUnknown {
		outcomeUnknownError(w, m, err)
		return
	}
	if code := apierr.HTTPStatus(reason); code != 0 {
		err = &runtime.HTTPStatusError{HTTPStatus: code, Err: err}
	}
	runtime.DefaultHTTPErrorHandler(ctx, mux, m, w, r, err)
}

// outcomeUnknownError answers an outcome-unknown write: 504 Gateway
// Timeout in the gateway's error form, {"code", "message", "details"},
// with "outcome": "unknown" and the "request_id" beside them, so that a
// script branches on the body's top level without reading the details.
func outcomeUnknownError(w http.ResponseWriter, m runtime.Marshaler, err error) {
	st := status.Convert(err)
	body := map[string]any{"outcome": "unknown"}
	if b, merr := m.Marshal(st.Proto()); merr == nil {
		var fields map[string]json.RawMessage
		if json.Unmarshal(b, &fields) == nil {
			for k, v := range fields {
				body[k] = v
			}
		}
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetMetadata()["request_id"] != "" {
			body["request_id"] = info.GetMetadata()["request_id"]
		}
	}
	b, merr := json.Marshal(body)
	if merr != nil {
		b = []byte(`{"code":4,"message":"outcome unknown","outcome":"unknown","details":[]}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(apierr.HTTPStatus(reasonOutcomeUnknown))
	w.Write(b)
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
