// Package wire is the codec of Cassandra's CQL native protocol, versions
// 4 and 5: frames, v5 segments, compression and message bodies.
//
// It turns bytes into values and back and nothing else: no connection
// state, no listener, no calls into the member. The listener (package
// cqlserver) owns the connection's phase (before and after STARTUP), the
// negotiated version and compression, and what each request means.
//
// Implemented:
//   - frames (v5: envelopes): the 9-byte header with the direction bit,
//     flags, stream id, opcode and length; ReadFrame refuses a body over
//     the caller's limit before reading it (*FrameTooLargeError) and a
//     version other than 4 or 5 (*UnsupportedVersionError, with the text
//     drivers recognise and the version to answer in);
//   - v5 segments: the uncompressed and lz4 formats with their CRC24
//     header and CRC32 trailer, SegmentReader and SegmentWriter for
//     envelopes batched in self-contained segments or spread over
//     several;
//   - lz4: v4's frame-level format (CompressV4, Frame.Compress) and v5's
//     per-segment blocks;
//   - the notation types: Decoder reads them with every length checked
//     against what remains of the body, the Append functions write them;
//   - requests, decoded by DecodeRequest and encoded by AppendBody:
//     STARTUP, OPTIONS, QUERY and EXECUTE with all query parameters of v4
//     and v5, PREPARE, BATCH (so that it can be refused), REGISTER,
//     AUTH_RESPONSE;
//   - responses, encoded by AppendBody and framed by ResponseFrame (with
//     warnings): ERROR with the extra bodies of its codes, READY,
//     AUTHENTICATE, SUPPORTED, AUTH_CHALLENGE, AUTH_SUCCESS, RESULT
//     (Void, Rows, SetKeyspace, Prepared, SchemaChange) and EVENT
//     (SCHEMA_CHANGE, TOPOLOGY_CHANGE, STATUS_CHANGE);
//   - EncodeValue: the cells of the types system tables use.
//
// On v5 the STARTUP exchange (and any OPTIONS before it) travels as bare
// frames read by ReadFrame; after READY or AUTHENTICATE both sides switch
// to segments. Which applies is the listener's to track.
//
// Not implemented: snappy (v4's other compression), tracing ids in
// responses, the custom payload of responses, decoding responses (the
// tests do it), decimal, varint, date, time, duration, tuple and UDT
// values, protocol v6 and versions 3 and lower (refused).
//
// A v4 exchange, after reading a frame:
//
//	f, err := wire.ReadFrame(conn, maxBody)
//	// *wire.UnsupportedVersionError: answer CodeProtocol on its Stream
//	f, err = f.Decompress(maxBody) // when lz4 was negotiated
//	req, err := wire.DecodeRequest(f)
//	resp := wire.ResponseFrame(f.Version, f.Stream, &wire.Ready{}, nil)
//	err = wire.WriteFrame(conn, resp)
package wire
