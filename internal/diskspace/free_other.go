//go:build !unix

package diskspace

import "errors"

// Free is not implemented on this platform: it always fails, so the
// NOSPACE alarm is raised only by writes that fail for lack of space.
func Free(dir string) (uint64, error) {
	return 0, errors.New("diskspace: free space is not measured on this platform")
}
