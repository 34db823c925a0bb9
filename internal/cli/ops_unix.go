//go:build unix

package cli

import (
	"fmt"
	"os"
	"syscall"
)

// execOps replaces this process with the program at path: the same
// process id, standard streams, signals and exit code, as if it had been
// run in the first place.
func execOps(path string, args []string) error {
	err := syscall.Exec(path, append([]string{path}, args...), os.Environ())
	return UsageErr(fmt.Errorf("starting %s: %w", path, err))
}
