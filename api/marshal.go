package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// jsonMarshaler is the gateway's JSON codec: protojson with the proto field
// names (request_id, min_epoch), every field present in answers, compact
// output, and body decoding errors that say what was wrong with the body.
type jsonMarshaler struct {
	runtime.JSONPb
}

func newJSONMarshaler() *jsonMarshaler {
	return &jsonMarshaler{runtime.JSONPb{
		MarshalOptions: protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true},
	}}
}

// Marshal renders v compactly. protojson varies its whitespace on purpose;
// scripts that compare answers deserve stable bytes.
func (m *jsonMarshaler) Marshal(v any) ([]byte, error) {
	b, err := m.JSONPb.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// NewDecoder wraps the protojson decoder's errors. A SetGuardrailsRequest
// may also give the values of set as JSON numbers and booleans
// ({"tables_warn_threshold": 500}), taken as their text.
func (m *jsonMarshaler) NewDecoder(r io.Reader) runtime.Decoder {
	return runtime.DecoderFunc(func(v any) error {
		var err error
		if req, ok := v.(*pb.SetGuardrailsRequest); ok {
			err = m.decodeSetGuardrails(r, req)
		} else {
			err = m.JSONPb.NewDecoder(r).Decode(v)
		}
		if err != nil {
			return fmt.Errorf("request body is not a valid JSON request: %v", err)
		}
		return nil
	})
}

// decodeSetGuardrails reads one JSON value from r into req, with the
// numbers and booleans of set turned into strings, as the map<string,
// string> of the proto has them. Everything else, and every error but
// those about the values of set, is protojson's.
func (m *jsonMarshaler) decodeSetGuardrails(r io.Reader, req *pb.SetGuardrailsRequest) error {
	var raw json.RawMessage
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return err
	}
	top, err := jsonMembers(raw)
	if err != nil {
		return m.JSONPb.Unmarshal(raw, req) // not an object: protojson's error
	}
	changed := false
	for i := range top {
		if top[i].key != "set" {
			continue
		}
		set, err := jsonMembers(top[i].value)
		if err != nil {
			break // null, or not an object: protojson's answer
		}
		n, err := guardrailStrings(set)
		if err != nil {
			return err
		}
		if n > 0 {
			top[i].value, changed = appendJSONObject(nil, set), true
		}
	}
	if changed {
		raw = appendJSONObject(nil, top)
	}
	// Unchanged, the body goes as it came, so that the positions in
	// protojson's errors are the client's.
	return m.JSONPb.Unmarshal(raw, req)
}

// jsonMember is one member of a JSON object, its value as it was written.
type jsonMember struct {
	key   string
	value json.RawMessage
}

// jsonMembers returns the members of the JSON object raw, in order,
// duplicates included.
func jsonMembers(raw json.RawMessage) ([]jsonMember, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []jsonMember
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var mem jsonMember
		mem.key, _ = tok.(string) // keys are strings in valid JSON
		if err := dec.Decode(&mem.value); err != nil {
			return nil, err
		}
		out = append(out, mem)
	}
	return out, nil
}

// appendJSONObject appends the object of members to b.
func appendJSONObject(b []byte, members []jsonMember) []byte {
	b = append(b, '{')
	for i, mem := range members {
		if i > 0 {
			b = append(b, ',')
		}
		key, _ := json.Marshal(mem.key) // a string always marshals
		b = append(append(append(b, key...), ':'), mem.value...)
	}
	return append(b, '}')
}

// guardrailStrings turns every number and boolean value of set's members
// into a string of its JSON text and returns how many it turned; other
// values than strings are refused naming the setting.
func guardrailStrings(set []jsonMember) (int, error) {
	seen := make(map[string]bool, len(set))
	n := 0
	for i, mem := range set {
		if seen[mem.key] {
			return 0, fmt.Errorf("set: %.200s is given twice", mem.key)
		}
		seen[mem.key] = true
		var kind string
		switch mem.value[0] {
		case '"':
			continue
		case '{':
			kind = "an object"
		case '[':
			kind = "an array"
		case 'n':
			kind = "null"
		default: // a number, true or false
			set[i].value, _ = json.Marshal(string(mem.value)) // a string always marshals
			n++
			continue
		}
		return 0, fmt.Errorf("set: %.200s is %s; want a string, a number or a boolean", mem.key, kind)
	}
	return n, nil
}
