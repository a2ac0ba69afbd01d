package main

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/metalog/metalog/internal/intparse"
)

// intFlagBits gives the size and signedness of pflag's integer flag types.
var intFlagBits = map[string]struct {
	bits   int
	signed bool
}{
	"int": {strconv.IntSize, true}, "int8": {8, true}, "int16": {16, true}, "int32": {32, true}, "int64": {64, true},
	"uint": {strconv.IntSize, false}, "uint8": {8, false}, "uint16": {16, false}, "uint32": {32, false}, "uint64": {64, false},
}

// flagParseError is the root command's FlagErrorFunc: an integer flag's value
// that is not an integer or does not fit is said in words ("out of range
// (at most N)") instead of strconv's `strconv.ParseInt: parsing "...":
// value out of range`. Other flag errors pass unchanged.
func flagParseError(_ *cobra.Command, err error) error {
	var bad *pflag.InvalidValueError
	var num *strconv.NumError
	if !errors.As(err, &bad) || !errors.As(err, &num) {
		return err
	}
	f, value := bad.GetFlag(), bad.GetValue()
	size, ok := intFlagBits[f.Value.Type()]
	if !ok {
		return err
	}
	var why error
	if size.signed {
		_, why = intparse.Int(value, 0, size.bits)
	} else {
		_, why = intparse.Uint(value, 0, size.bits)
	}
	if why == nil {
		return err
	}
	return fmt.Errorf("invalid argument %q for --%s: %w", value, f.Name, why)
}
