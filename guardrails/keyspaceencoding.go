package guardrails

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// OverridesEncodingVersion is the first byte of an encoding made by
// AppendOverride and AppendOverrides.
const OverridesEncodingVersion = 1

// maxOverrides bounds the number of overrides DecodeOverrides reads.
const maxOverrides = 1 << 20

// AppendOverride appends the canonical encoding of o to dst: the version,
// then o's body (appendOverrideBody). Equal overrides encode to equal
// bytes.
func AppendOverride(dst []byte, o Override) []byte {
	return appendOverrideBody(append(dst, OverridesEncodingVersion), o)
}

// appendOverrideBody appends the scope (a uvarint length and its bytes),
// the number of settings, and each setting as its Settings tag (uvarint,
// ascending) and value (zigzag varint).
func appendOverrideBody(dst []byte, o Override) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(o.Scope)))
	dst = append(dst, o.Scope...)
	dst = binary.AppendUvarint(dst, uint64(o.Len()))
	for _, d := range byTag {
		if v, ok := o.Get(d.name); ok {
			dst = binary.AppendUvarint(dst, d.tag)
			dst = binary.AppendVarint(dst, v)
		}
	}
	return dst
}

// AppendOverrides appends the canonical encoding of every override of ov
// to dst: the version, their number, and each one's body sorted by scope.
func AppendOverrides(dst []byte, ov Overrides) []byte {
	dst = append(dst, OverridesEncodingVersion)
	all := ov.All()
	dst = binary.AppendUvarint(dst, uint64(len(all)))
	for _, o := range all {
		dst = appendOverrideBody(dst, o)
	}
	return dst
}

// DecodeOverride decodes an encoding made by AppendOverride; the result
// passes Validate. An override that sets nothing decodes (it removes a
// scope's override).
func DecodeOverride(b []byte) (Override, error) {
	d := overrideDecoder{b: b}
	d.version()
	o := d.override()
	if d.err == nil && len(d.b) != 0 {
		d.failf("%d trailing bytes", len(d.b))
	}
	return o, d.err
}

// DecodeOverrides decodes an encoding made by AppendOverrides: every
// override valid, non-empty, scopes ascending and distinct.
func DecodeOverrides(b []byte) (Overrides, error) {
	d := overrideDecoder{b: b}
	d.version()
	n := d.uvarint("override count")
	if d.err == nil && n > maxOverrides {
		d.failf("%d overrides", n)
	}
	var ov Overrides
	set := &overrideSet{exact: map[string]Override{}}
	last := ""
	for i := uint64(0); i < n && d.err == nil; i++ {
		o := d.override()
		switch {
		case d.err != nil:
		case o.Empty():
			d.failf("override of %s sets nothing", o.Scope)
		case i > 0 && o.Scope <= last:
			d.failf("override of %s out of order", o.Scope)
		case IsPattern(o.Scope):
			set.patterns = append(set.patterns, o)
		default:
			set.exact[o.Scope] = o
		}
		last = o.Scope
	}
	if d.err == nil && len(d.b) != 0 {
		d.failf("%d trailing bytes", len(d.b))
	}
	if d.err != nil {
		return Overrides{}, d.err
	}
	if n > 0 {
		sortPatterns(set.patterns)
		ov.p = set
	}
	return ov, nil
}

// sortPatterns orders patterns longest prefix first, then by scope, the
// order Lookup scans.
func sortPatterns(p []Override) {
	sort.Slice(p, func(i, j int) bool {
		a, b := p[i].Scope, p[j].Scope
		if len(a) != len(b) {
			return len(a) > len(b)
		}
		return a < b
	})
}

// overrideDecoder reads an override encoding, keeping the first error.
type overrideDecoder struct {
	b   []byte
	err error
}

func (d *overrideDecoder) failf(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("guardrails: decode keyspace overrides: "+format, args...)
	}
}

func (d *overrideDecoder) version() {
	switch {
	case len(d.b) == 0:
		d.failf("empty input")
	case d.b[0] != OverridesEncodingVersion:
		d.failf("unsupported version %d", d.b[0])
	default:
		d.b = d.b[1:]
	}
}

func (d *overrideDecoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.failf("bad %s", what)
		return 0
	}
	d.b = d.b[k:]
	return v
}

// override reads one override body.
func (d *overrideDecoder) override() Override {
	var o Override
	l := d.uvarint("scope length")
	if d.err != nil {
		return o
	}
	if l > uint64(len(d.b)) {
		d.failf("scope length %d exceeds the %d bytes left", l, len(d.b))
		return o
	}
	o.Scope, d.b = string(d.b[:l]), d.b[l:]
	if s, err := ParseScope(o.Scope); err != nil || s != o.Scope {
		d.failf("bad scope %q", o.Scope)
		return o
	}
	n := d.uvarint("setting count")
	if d.err == nil && n > numOverridable {
		d.failf("%d settings in the override of %s", n, o.Scope)
	}
	var last uint64
	for i := uint64(0); i < n && d.err == nil; i++ {
		tag := d.uvarint("setting tag")
		if d.err != nil {
			break
		}
		s := tagSetting(tag)
		if s == nil || overridableIndex(s.name) < 0 {
			d.failf("setting tag %d in the override of %s", tag, o.Scope)
			break
		}
		if i > 0 && tag <= last {
			d.failf("setting %s out of order", s.name)
			break
		}
		last = tag
		v, k := binary.Varint(d.b)
		if k <= 0 || v < Disabled {
			d.failf("bad value of %s", s.name)
			break
		}
		d.b = d.b[k:]
		idx := overridableIndex(s.name)
		o.vals[idx], o.has = v, o.has|1<<idx
	}
	if d.err == nil {
		if err := o.Validate(); err != nil {
			d.failf("%v", err)
		}
	}
	return o
}
