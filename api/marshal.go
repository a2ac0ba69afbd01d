package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
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

// NewDecoder wraps the protojson decoder's errors.
func (m *jsonMarshaler) NewDecoder(r io.Reader) runtime.Decoder {
	d := m.JSONPb.NewDecoder(r)
	return runtime.DecoderFunc(func(v any) error {
		if err := d.Decode(v); err != nil {
			return fmt.Errorf("request body is not a valid JSON request: %v", err)
		}
		return nil
	})
}
