// Command codegen times `msgcontract generate --lang go` against
// `protoc --go_out` on the same files: the example contracts plus a
// synthetic corpus of 200 contract files. It prints both times (the
// median of -runs runs each) and the closing line
//
//	ratio generate-go/protoc-go=X
//
// Run it with `make bench-codegen` (bench/codegen/run.sh), which installs
// protoc and protoc-gen-go first. The ratio is measured and reported,
// never asserted: its goal is below 1.0.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

func main() {
	var (
		files = flag.Int("files", 200, "synthetic contract files to generate")
		runs  = flag.Int("runs", 5, "timed runs of each tool; the median is reported")
		repo  = flag.String("repo", ".", "repository root (examples/proto and contracts/ are read from it)")
		keep  = flag.Bool("keep", false, "keep the corpus and outputs and print where they are")
	)
	flag.Parse()
	if err := run(*repo, *files, *runs, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "bench-codegen:", err)
		os.Exit(1)
	}
}

func run(repo string, nfiles, runs int, keep bool) error {
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		return fmt.Errorf("protoc not found; run bash scripts/install-protoc.sh")
	}
	protocGenGo, err := findProtocGenGo()
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "bench-codegen-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("work dir:", work)
	} else {
		defer os.RemoveAll(work)
	}
	bin := filepath.Join(work, "msgcontract")
	build := exec.Command("go", "build", "-o", bin, "./cmd/msgcontract")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	corpus := filepath.Join(work, "proto")
	protos, err := writeCorpus(corpus, nfiles)
	if err != nil {
		return err
	}
	examples := filepath.Join(repo, "examples", "proto")
	for _, f := range []string{"shop/payment/v1/payment.proto", "shop/inventory/v1/inventory.proto"} {
		protos = append(protos, filepath.Join(examples, filepath.FromSlash(f)))
	}
	gen := func(out string) *exec.Cmd {
		args := []string{"generate", "--lang", "go", "--quiet", "--out", out, "-I", corpus, "-I", examples}
		return exec.Command(bin, append(args, protos...)...)
	}
	pgo := func(out string) *exec.Cmd {
		args := []string{"--plugin=protoc-gen-go=" + protocGenGo, "--go_out=" + out,
			"-I", corpus, "-I", examples, "-I", filepath.Join(repo, "contracts")}
		return exec.Command(protoc, append(args, protos...)...)
	}
	// One untimed run each warms the page cache.
	var genWall, pgoWall, genCPU, pgoCPU []time.Duration
	for i := 0; i <= runs; i++ {
		dg, err := timed(gen, filepath.Join(work, fmt.Sprintf("gen-%d", i)))
		if err != nil {
			return err
		}
		dp, err := timed(pgo, filepath.Join(work, fmt.Sprintf("pgo-%d", i)))
		if err != nil {
			return err
		}
		if i > 0 {
			genWall, pgoWall = append(genWall, dg.wall), append(pgoWall, dp.wall)
			genCPU, pgoCPU = append(genCPU, dg.cpu), append(pgoCPU, dp.cpu)
		}
	}
	g, p := median(genWall), median(pgoWall)
	fmt.Printf("files: %d (%d synthetic + 2 examples), runs: %d, median of each\n", len(protos), nfiles, runs)
	fmt.Printf("msgcontract generate --lang go: wall %v cpu %v (wall runs %v)\n", g.Round(time.Millisecond), median(genCPU).Round(time.Millisecond), rounded(genWall))
	fmt.Printf("protoc --go_out:                wall %v cpu %v (wall runs %v)\n", p.Round(time.Millisecond), median(pgoCPU).Round(time.Millisecond), rounded(pgoWall))
	fmt.Printf("cpu ratio generate-go/protoc-go=%.2f\n", float64(median(genCPU))/float64(median(pgoCPU)))
	fmt.Printf("ratio generate-go/protoc-go=%.2f\n", float64(g)/float64(p))
	return nil
}

// sample is one timed run: wall-clock time, and the CPU time (user plus
// system) of the process and the children it waited for (protoc's
// plugin), which the load of a shared machine disturbs less.
type sample struct{ wall, cpu time.Duration }

func timed(cmd func(out string) *exec.Cmd, out string) (sample, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return sample{}, err
	}
	c := cmd(out)
	start := time.Now()
	b, err := c.CombinedOutput()
	wall := time.Since(start)
	if err != nil {
		return sample{}, fmt.Errorf("%s: %v\n%s", strings.Join(c.Args[:2], " "), err, b)
	}
	return sample{wall: wall, cpu: c.ProcessState.UserTime() + c.ProcessState.SystemTime()}, nil
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func rounded(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}

// findProtocGenGo looks on PATH, then in GOBIN and GOPATH/bin, where
// `go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12` puts it.
func findProtocGenGo() (string, error) {
	if p, err := exec.LookPath("protoc-gen-go"); err == nil {
		return p, nil
	}
	for _, v := range []string{"GOBIN", "GOPATH"} {
		out, err := exec.Command("go", "env", v).Output()
		dir := strings.TrimSpace(string(out))
		if err != nil || dir == "" {
			continue
		}
		if v == "GOPATH" {
			dir = filepath.Join(strings.Split(dir, string(os.PathListSeparator))[0], "bin")
		}
		p := filepath.Join(dir, "protoc-gen-go")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("protoc-gen-go not found; run go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12")
}
