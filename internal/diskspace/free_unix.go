//go:build unix

package diskspace

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Free returns the bytes of the filesystem holding dir that an
// unprivileged process may still write (statfs's available blocks).
func Free(dir string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("diskspace: statfs %s: %w", dir, err)
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}
