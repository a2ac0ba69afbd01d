package guardrails

import (
	"encoding/binary"
	"fmt"
)

// EncodingVersion is the first byte of an encoding made by AppendSettings.
const EncodingVersion = 1

// maxSetLen bounds the length of a property set read by DecodeSettings.
const maxSetLen = 4096

// AppendSettings appends the canonical encoding of s to dst and returns the
// extended slice: the version, the number of settings, then each setting as
// its tag (uvarint, ascending) and value (a zigzag varint for a threshold,
// a byte 0 or 1 for a flag, a uvarint length and the comma-separated names
// for a property set). Every setting is written, defaults included, so that
// an entry means the same to a later version whose defaults differ. Equal
// settings encode to equal bytes. It allocates only when dst must grow.
func AppendSettings(dst []byte, s Settings) []byte {
	dst = append(dst, EncodingVersion)
	dst = binary.AppendUvarint(dst, uint64(len(settings)))
	for _, d := range byTag {
		dst = binary.AppendUvarint(dst, d.tag)
		switch d.kind {
		case kindThreshold:
			dst = binary.AppendVarint(dst, *d.threshold(&s))
		case kindFlag:
			b := byte(0)
			if *d.flag(&s) {
				b = 1
			}
			dst = append(dst, b)
		default:
			p := d.set(&s).names
			dst = binary.AppendUvarint(dst, uint64(len(p)))
			dst = append(dst, p...)
		}
	}
	return dst
}

// byTag lists the settings in ascending tag order.
var byTag = func() []*setting {
	out := make([]*setting, len(settings))
	for i := range settings {
		out[i] = &settings[i]
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].tag < out[j-1].tag; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}()

// tagSetting returns the setting with the encoding tag tag, or nil.
func tagSetting(tag uint64) *setting {
	for _, d := range byTag {
		if d.tag == tag {
			return d
		}
	}
	return nil
}

// DecodeSettings decodes an encoding made by AppendSettings. Settings the
// encoding lacks (written by an older version) take their defaults; tags
// it does not know (a newer version), tags out of order, values out of
// range, non-canonical property sets and trailing bytes are errors, and the
// result must pass Validate, so DecodeSettings(AppendSettings(nil, s))
// returns s for every valid s.
func DecodeSettings(b []byte) (Settings, error) {
	s := Defaults()
	fail := func(format string, args ...any) (Settings, error) {
		return Settings{}, fmt.Errorf("guardrails: decode settings: "+format, args...)
	}
	if len(b) == 0 {
		return fail("empty input")
	}
	if b[0] != EncodingVersion {
		return fail("unsupported version %d", b[0])
	}
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(settings)) {
		return fail("bad setting count")
	}
	b = b[k:]
	var last uint64
	for i := uint64(0); i < n; i++ {
		tag, k := binary.Uvarint(b)
		if k <= 0 {
			return fail("truncated tag")
		}
		b = b[k:]
		d := tagSetting(tag)
		if d == nil {
			return fail("unknown setting tag %d", tag)
		}
		if tag <= last {
			return fail("setting %s out of order", d.name)
		}
		last = tag
		switch d.kind {
		case kindThreshold:
			v, k := binary.Varint(b)
			if k <= 0 {
				return fail("truncated value of %s", d.name)
			}
			b = b[k:]
			if v < Disabled {
				return fail("%s is %d", d.name, v)
			}
			*d.threshold(&s) = v
		case kindFlag:
			if len(b) == 0 || b[0] > 1 {
				return fail("bad value of %s", d.name)
			}
			*d.flag(&s) = b[0] == 1
			b = b[1:]
		default:
			l, k := binary.Uvarint(b)
			if k <= 0 || l > maxSetLen || l > uint64(len(b)-k) {
				return fail("bad length of %s", d.name)
			}
			text := string(b[k : k+int(l)])
			b = b[k+int(l):]
			p := NewPropertySet(text)
			if p.names != text {
				return fail("%s is not in canonical form", d.name)
			}
			*d.set(&s) = p
		}
	}
	if len(b) != 0 {
		return fail("%d trailing bytes", len(b))
	}
	if err := s.Validate(); err != nil {
		return Settings{}, fmt.Errorf("guardrails: decode settings: %w", err)
	}
	return s, nil
}
