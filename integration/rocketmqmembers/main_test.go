//go:build rocketmq

package rocketmqmembers_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var (
	root, _ = filepath.Abs(filepath.Join("..", ".."))
	// binEnv names the CLI and the Go peer TestMain built for the suites.
	binEnv []string
)

// TestMain checks the broker's variables and builds the msgcontract CLI
// (with msgcontract-ops beside it, which it hands dlq to) and the Go peer.
func TestMain(m *testing.M) {
	for _, v := range []string{"MSGCONTRACT_ROCKETMQ_PROXY", "MSGCONTRACT_ROCKETMQ_NAMESRV", "MSGCONTRACT_ROCKETMQ_BROKER"} {
		if os.Getenv(v) == "" {
			fmt.Fprintf(os.Stderr, "%s is not set: run under scripts/with-rocketmq.sh (make test-java-rocketmq, make test-rocketmq-python)\n", v)
			os.Exit(1)
		}
	}
	bin, err := os.MkdirTemp("", "msgcontract-rocketmq-members")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, b := range [][]string{
		{"-o", filepath.Join(bin, "msgcontract"), "./cmd/msgcontract"},
		{"-o", filepath.Join(bin, "msgcontract-ops"), "./cmd/msgcontract-ops"},
		{"-tags", "rocketmq", "-o", filepath.Join(bin, "rocketmqpeer"), "./integration/rocketmqmembers/rocketmqpeer"},
	} {
		cmd := exec.Command("go", append([]string{"build"}, b...)...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build %v: %v\n%s", b, err, out)
			os.RemoveAll(bin)
			os.Exit(1)
		}
	}
	binEnv = []string{"MSGCONTRACT_BIN=" + filepath.Join(bin, "msgcontract"),
		"MSGCONTRACT_ROCKETMQ_GO_PEER=" + filepath.Join(bin, "rocketmqpeer")}
	code := m.Run()
	os.RemoveAll(bin)
	os.Exit(code)
}
