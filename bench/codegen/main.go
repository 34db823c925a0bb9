// Command codegen times three ways of generating the Go of the same
// files (the example contracts plus a synthetic corpus of 200 contract
// files): `msgcontract generate --lang go --with-pb`, which writes both
// the .pb.go and the .msgcontract.go files; `protoc --go_out
// --msgcontract_out`, which writes the same files (checked byte for
// byte, but for the header line naming protoc's version); and `protoc --go_out` alone. It prints wall and CPU times (the
// median of -runs runs each) and two closing lines
//
//	ratio generate-with-pb/protoc-go+msgcontract=X (cpu Y)
//	ratio generate-with-pb/protoc-go-alone=X (cpu Y)
//
// Run it with `make bench-codegen` (bench/codegen/run.sh), which installs
// protoc and protoc-gen-go first. The ratio is measured and reported,
// never asserted: its goal is below 1.0.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	plugin := filepath.Join(work, "protoc-gen-msgcontract")
	for target, pkg := range map[string]string{bin: "./cmd/msgcontract", plugin: "./cmd/protoc-gen-msgcontract"} {
		build := exec.Command("go", "build", "-o", target, pkg)
		build.Dir = repo
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
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
	includes := []string{"-I", corpus, "-I", examples}
	protocArgs := func(outs ...string) []string {
		args := []string{"--plugin=protoc-gen-go=" + protocGenGo, "--plugin=protoc-gen-msgcontract=" + plugin}
		args = append(args, outs...)
		args = append(args, includes...)
		return append(append(args, "-I", filepath.Join(repo, "contracts")), protos...)
	}
	tools := []tool{
		{name: "msgcontract generate --lang go --with-pb", cmd: func(out string) *exec.Cmd {
			args := append([]string{"generate", "--lang", "go", "--with-pb", "--quiet", "--out", out}, includes...)
			return exec.Command(bin, append(args, protos...)...)
		}},
		{name: "protoc --go_out --msgcontract_out", cmd: func(out string) *exec.Cmd {
			return exec.Command(protoc, protocArgs("--go_out="+out, "--msgcontract_out=lang=go:"+out)...)
		}},
		{name: "protoc --go_out", cmd: func(out string) *exec.Cmd {
			return exec.Command(protoc, protocArgs("--go_out="+out)...)
		}},
	}
	// Runs alternate between the tools, so that a change in the machine's
	// load touches all of them alike; the first (untimed) run of each warms
	// the page cache.
	for i := 0; i <= runs; i++ {
		for j := range tools {
			s, err := timed(tools[j].cmd, filepath.Join(work, fmt.Sprintf("%d-%d", j, i)))
			if err != nil {
				return err
			}
			if i > 0 {
				tools[j].wall, tools[j].cpu = append(tools[j].wall, s.wall), append(tools[j].cpu, s.cpu)
			}
		}
	}
	// The first two write the same files; check it, so the comparison is
	// of equal work.
	n, err := sameTree(filepath.Join(work, "0-0"), filepath.Join(work, "1-0"))
	if err != nil {
		return fmt.Errorf("%s and %s wrote different output: %w", tools[0].name, tools[1].name, err)
	}
	fmt.Printf("files: %d (%d synthetic + 2 examples), runs: %d, median of each\n", len(protos), nfiles, runs)
	for _, t := range tools {
		fmt.Printf("%-42s wall %8v  cpu %8v  (wall runs %v)\n", t.name+":", median(t.wall).Round(time.Millisecond),
			median(t.cpu).Round(time.Millisecond), rounded(t.wall))
	}
	fmt.Printf("output: %s and %s wrote the same %d files (byte for byte but the protoc version line)\n", tools[0].name, tools[1].name, n)
	ratio := func(label string, a, b tool) {
		fmt.Printf("ratio %s=%.2f (cpu %.2f)\n", label, float64(median(a.wall))/float64(median(b.wall)),
			float64(median(a.cpu))/float64(median(b.cpu)))
	}
	ratio("generate-with-pb/protoc-go+msgcontract", tools[0], tools[1])
	ratio("generate-with-pb/protoc-go-alone", tools[0], tools[2])
	return nil
}

// tool is one way of generating the corpus's Go, with its timed runs.
type tool struct {
	name      string
	cmd       func(out string) *exec.Cmd
	wall, cpu []time.Duration
}

// protocVersion is the header line protoc-gen-go writes with the
// compiler's version: "(unknown)" when run in-process, protoc's own
// version under protoc. It is the one line allowed to differ.
var protocVersion = regexp.MustCompile(`(?m)^// \tprotoc {8}.*$`)

func withoutProtocVersion(b []byte) []byte { return protocVersion.ReplaceAll(b, nil) }

// sameTree reports how many files a and b hold, or an error naming the
// first file that differs or is missing on one side.
func sameTree(a, b string) (int, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(a, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(a, path)
		files[rel], err = os.ReadFile(path)
		return err
	})
	if err != nil {
		return 0, err
	}
	n := 0
	err = filepath.WalkDir(b, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(b, path)
		want, ok := files[rel]
		if !ok {
			return fmt.Errorf("%s only in the second", rel)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.Equal(withoutProtocVersion(got), withoutProtocVersion(want)) {
			return fmt.Errorf("%s differs", rel)
		}
		delete(files, rel)
		n++
		return nil
	})
	if err != nil {
		return 0, err
	}
	for rel := range files {
		return 0, fmt.Errorf("%s only in the first", rel)
	}
	return n, nil
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
