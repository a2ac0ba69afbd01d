package api

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"go.yaml.in/yaml/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	_ "github.com/metalog/metalog/api/metalogpb" // registers the descriptors the rules name
	"github.com/metalog/metalog/internal/intparse"
	"github.com/metalog/metalog/internal/spell"
)

// gatewayYAML holds the HTTP rules the gateway code was generated from.
//
//go:embed gateway.yaml
var gatewayYAML []byte

// route is one HTTP rule: the method and path pattern of an RPC, and the
// query parameters it takes.
type route struct {
	method, pattern string
	// query maps each query parameter the route takes, by the proto and
	// the JSON name of its field, to that field: the fields of the
	// request message that the path does not bind, none when the body is
	// the whole request.
	query map[string]protoreflect.FieldDescriptor
	names []string // the proto names of query, sorted, for messages
	body  bool     // the body is the whole request
}

// routes are the gateway's routes, read from the same gateway.yaml the
// generated gateway code was made from, with the request fields taken from
// the generated descriptors: neither can drift from what the gateway
// serves. It tells which route a request takes, as the gateway would, and
// which methods a path takes.
type routes struct {
	list    []route
	methods []string          // every method of a route, sorted
	probe   *runtime.ServeMux // matches requests to routes as the gateway does
}

// routingOptions are the gateway's matching options, the same for the
// gateway and the probe. A POST with a form body is not taken for a GET
// (path length fallback) nor turned into another method by
// X-HTTP-Method-Override: a wrong method is a wrong method.
var routingOptions = []runtime.ServeMuxOption{runtime.WithDisablePathLengthFallback(), runtime.WithDisableHTTPMethodOverride()}

// probeKey is the context key under which the probe's handlers record the
// route a request matched.
type probeKey struct{}

// pathVariable matches the variables of an HTTP rule's path, {name} or
// {name=pattern}.
var pathVariable = regexp.MustCompile(`\{([^}=]+)(=[^}]*)?\}`)

// newRoutes reads the rules of gateway.yaml.
func newRoutes() (*routes, error) {
	var cfg struct {
		HTTP struct {
			Rules []struct {
				Selector string `yaml:"selector"`
				Get      string `yaml:"get"`
				Put      string `yaml:"put"`
				Post     string `yaml:"post"`
				Delete   string `yaml:"delete"`
				Patch    string `yaml:"patch"`
				Body     string `yaml:"body"`
			} `yaml:"rules"`
		} `yaml:"http"`
	}
	if err := yaml.Unmarshal(gatewayYAML, &cfg); err != nil {
		return nil, fmt.Errorf("gateway.yaml: %w", err)
	}
	rt := &routes{probe: runtime.NewServeMux(append([]runtime.ServeMuxOption{
		runtime.WithRoutingErrorHandler(func(context.Context, *runtime.ServeMux, runtime.Marshaler, http.ResponseWriter, *http.Request, int) {}),
		runtime.WithErrorHandler(func(context.Context, *runtime.ServeMux, runtime.Marshaler, http.ResponseWriter, *http.Request, error) {
		}),
	}, routingOptions...)...)}
	for _, r := range cfg.HTTP.Rules {
		for method, pattern := range map[string]string{"GET": r.Get, "PUT": r.Put, "POST": r.Post, "DELETE": r.Delete, "PATCH": r.Patch} {
			if pattern == "" {
				continue
			}
			ro, err := newRoute(r.Selector, method, pattern, r.Body)
			if err != nil {
				return nil, err
			}
			rt.list = append(rt.list, ro)
			if !slices.Contains(rt.methods, method) {
				rt.methods = append(rt.methods, method)
			}
		}
	}
	slices.Sort(rt.methods)
	for i := range rt.list {
		err := rt.probe.HandlePath(rt.list[i].method, rt.list[i].pattern, func(_ http.ResponseWriter, r *http.Request, _ map[string]string) {
			if hit, ok := r.Context().Value(probeKey{}).(*int); ok {
				*hit = i
			}
		})
		if err != nil {
			return nil, fmt.Errorf("gateway.yaml: %s %s: %w", rt.list[i].method, rt.list[i].pattern, err)
		}
	}
	return rt, nil
}

// newRoute is the route of the RPC named by selector at method and pattern.
func newRoute(selector, method, pattern, body string) (route, error) {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(selector))
	if err != nil {
		return route{}, fmt.Errorf("gateway.yaml: selector %s: %w", selector, err)
	}
	rpc, ok := d.(protoreflect.MethodDescriptor)
	if !ok {
		return route{}, fmt.Errorf("gateway.yaml: selector %s is not a method", selector)
	}
	ro := route{method: method, pattern: pattern, query: map[string]protoreflect.FieldDescriptor{}, body: body == "*"}
	if ro.body {
		return ro, nil
	}
	inPath := map[string]bool{}
	for _, m := range pathVariable.FindAllStringSubmatch(pattern, -1) {
		top, _, _ := strings.Cut(m[1], ".")
		inPath[top] = true
	}
	fields := rpc.Input().Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		if inPath[string(f.Name())] || string(f.Name()) == body {
			continue
		}
		ro.query[string(f.Name())], ro.query[f.JSONName()] = f, f
		ro.names = append(ro.names, string(f.Name()))
	}
	slices.Sort(ro.names)
	return ro, nil
}

// noResponse is the probe's response writer: the probe writes nothing.
type noResponse struct{}

func (noResponse) Header() http.Header         { return http.Header{} }
func (noResponse) Write(b []byte) (int, error) { return len(b), nil }
func (noResponse) WriteHeader(int)             {}

// match returns the route r would take with method, or nil.
func (rt *routes) match(r *http.Request, method string) *route {
	hit := -1
	p := r.WithContext(context.WithValue(r.Context(), probeKey{}, &hit))
	p.Method = method
	rt.probe.ServeHTTP(noResponse{}, p)
	if hit < 0 {
		return nil
	}
	return &rt.list[hit]
}

// allowed returns the routes of r's path, one per method, sorted by
// method.
func (rt *routes) allowed(r *http.Request) []*route {
	var out []*route
	for _, m := range rt.methods {
		if ro := rt.match(r, m); ro != nil {
			out = append(out, ro)
		}
	}
	return out
}

// queryChecked refuses, with 400 in the gateway's error form, a request to
// a route with a query parameter the route does not take (the gateway
// would ignore it: a typo in ?min_epoch would silently weaken a read), or
// with an integer parameter that is not one or does not fit.
func (rt *routes) queryChecked(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery == "" {
			next.ServeHTTP(w, r)
			return
		}
		q, err := url.ParseQuery(r.URL.RawQuery)
		ro := rt.match(r, r.Method)
		if err != nil || ro == nil {
			next.ServeHTTP(w, r) // the gateway answers a malformed query or an unknown route
			return
		}
		if err := ro.checkQuery(q); err != nil {
			httpError(w, http.StatusBadRequest, codes.InvalidArgument, err.Error())
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkQuery checks the parameters of q, in sorted order.
func (ro *route) checkQuery(q url.Values) error {
	keys := slices.Sorted(maps.Keys(q))
	for _, key := range keys {
		// The gateway reads "field.sub" and "field[key]" into field.
		name, _, _ := strings.Cut(key, ".")
		name, _, _ = strings.Cut(name, "[")
		f, ok := ro.query[name]
		if !ok {
			return ro.unknownParameter(key)
		}
		if name != key {
			continue
		}
		for _, v := range q[key] {
			if err := checkIntegerParameter(f, v); err != nil {
				return fmt.Errorf("query parameter %s=%.200q: %w", key, v, err)
			}
		}
	}
	return nil
}

func (ro *route) unknownParameter(key string) error {
	takes := "none"
	if len(ro.names) > 0 {
		takes = strings.Join(ro.names, ", ")
	} else if ro.body {
		takes = "none: the request is the JSON body"
	}
	msg := fmt.Sprintf("unknown query parameter %.200q: %s %s takes %s", key, ro.method, ro.pattern, takes)
	if near := spell.Closest(key, ro.names); near != "" {
		msg += "; did you mean " + near + "?"
	}
	return errors.New(msg)
}

// checkIntegerParameter checks v for an integer field f as the gateway
// parses it (base 10), for an error in words.
func checkIntegerParameter(f protoreflect.FieldDescriptor, v string) error {
	var err error
	switch f.Kind() {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		_, err = intparse.Int(v, 10, 32)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		_, err = intparse.Int(v, 10, 64)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		_, err = intparse.Uint(v, 10, 32)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		_, err = intparse.Uint(v, 10, 64)
	}
	return err
}
