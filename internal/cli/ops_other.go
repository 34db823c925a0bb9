//go:build !unix

package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// execOps runs the program at path with this process's standard streams
// and ends with its exit code (where a process cannot be replaced).
func execOps(path string, args []string) error {
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return &exitError{code: exit.ExitCode(), silent: true}
	}
	if err != nil {
		return UsageErr(fmt.Errorf("starting %s: %w", path, err))
	}
	return nil
}
