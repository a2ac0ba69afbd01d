package api

import (
	"fmt"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	// The proto codec the server codec falls back to registers itself.
	_ "google.golang.org/grpc/encoding/proto"
)

// encodedMessage is a response marshalled already: its bytes go out as
// they are, the same bytes on every stream that sends them (a change
// feed's message shared by the watchers at one epoch). The bytes must not
// be modified.
type encodedMessage struct{ b []byte }

// sharingCodec is the servers' codec: gRPC's proto codec, but for an
// *encodedMessage, whose bytes it hands over without a copy. A
// grpc.PreparedMsg would not do for the sharing: it is made for one
// stream's codec and compressor (Encode copies the bytes and compresses
// them as that stream does), whereas the codec runs before each stream's
// own compression, so a stream that compresses still does.
type sharingCodec struct{ proto encoding.CodecV2 }

// newSharingCodec returns the codec, over gRPC's registered proto codec.
func newSharingCodec() sharingCodec {
	c := encoding.GetCodecV2("proto")
	if c == nil {
		panic("api: gRPC's proto codec is not registered")
	}
	return sharingCodec{proto: c}
}

// Marshal returns the bytes of an *encodedMessage, or what the proto
// codec makes of any other message.
func (c sharingCodec) Marshal(v any) (mem.BufferSlice, error) {
	if m, ok := v.(*encodedMessage); ok {
		return mem.BufferSlice{mem.SliceBuffer(m.b)}, nil
	}
	return c.proto.Marshal(v)
}

// Unmarshal is the proto codec's.
func (c sharingCodec) Unmarshal(data mem.BufferSlice, v any) error { return c.proto.Unmarshal(data, v) }

// Name is the proto codec's: the content subtype does not change.
func (c sharingCodec) Name() string { return c.proto.Name() }

// marshalShared marshals m as the proto codec would.
func marshalShared(m proto.Message) ([]byte, error) {
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("api: marshal %T: %w", m, err)
	}
	return b, nil
}
