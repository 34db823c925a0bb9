// Command replayplugin is bench/codegen's stand-in for a protoc plugin that
// answers, without working, with a response recorded before: the files
// protoc-gen-msgcontract wrote for the same request. In a protoc build it
// measures what protoc spends on a plugin that writes those files (encoding
// the request, starting a process, decoding the response and writing its
// files), so that what lies between it and the real plugin is the plugin's
// own process.
//
// It reads the whole request from stdin, then:
//
//   - with REPLAY_RECORD=PLUGIN set, runs PLUGIN on the request, saves its
//     response in REPLAY_FILE and answers with it (the bench's untimed
//     recording run);
//   - otherwise answers with REPLAY_FILE's bytes.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "replayplugin:", err)
		os.Exit(1)
	}
}

func run() error {
	file := os.Getenv("REPLAY_FILE")
	if file == "" {
		return fmt.Errorf("REPLAY_FILE is not set: the bench sets it to the recorded response")
	}
	req, err := io.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	var resp []byte
	if plugin := os.Getenv("REPLAY_RECORD"); plugin != "" {
		cmd := exec.Command(plugin)
		cmd.Stdin, cmd.Stderr = bytes.NewReader(req), os.Stderr
		if resp, err = cmd.Output(); err != nil {
			return fmt.Errorf("recording %s: %w", plugin, err)
		}
		if err := os.WriteFile(file, resp, 0o644); err != nil {
			return err
		}
	} else if resp, err = os.ReadFile(file); err != nil {
		return err
	}
	_, err = os.Stdout.Write(resp)
	return err
}
