package msgcontract_test

import (
	"bufio"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The supported protobuf versions live in the file PROTOBUF; the files
// that cannot read it (Maven POMs, pip requirements, pyproject files,
// go.mod, templates of msgcontract init, the example services) repeat
// them, and TestProtobufPins fails, naming the file, when one disagrees.

func protobufPins(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("PROTOBUF")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pins := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("PROTOBUF: %q is not NAME=VALUE", line)
		}
		pins[k] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return pins
}

// samePin fails unless file holds want in the first group of re.
func samePin(t *testing.T, file, re, want string) {
	t.Helper()
	if got := submatch(t, file, re); got != want {
		t.Errorf("%s: %s is %q, PROTOBUF says %q", file, re, got, want)
	}
}

// older reports whether version a is older than b (dotted numbers).
func older(t *testing.T, a, b string) bool {
	t.Helper()
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, err1 := strconv.Atoi(as[i])
		y, err2 := strconv.Atoi(bs[i])
		if err1 != nil || err2 != nil {
			t.Fatalf("versions %q, %q: not dotted numbers", a, b)
		}
		if x != y {
			return x < y
		}
	}
	return len(as) < len(bs)
}

// major is the first number of a version.
func major(t *testing.T, v string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	if err != nil {
		t.Fatalf("version %q: %v", v, err)
	}
	return n
}

func TestProtobufPins(t *testing.T) {
	p := protobufPins(t)
	for _, k := range []string{"JAVA_PROTOBUF_NEWEST", "JAVA_PROTOBUF_OLDEST", "PYTHON_PROTOBUF_NEWEST",
		"PYTHON_GRPCIO_TOOLS_NEWEST", "PYTHON_TYPES_PROTOBUF_NEWEST", "PYTHON_PROTOBUF_OLDEST",
		"PYTHON_GRPCIO_TOOLS_OLDEST", "PYTHON_TYPES_PROTOBUF_OLDEST", "GO_PROTOBUF"} {
		if p[k] == "" {
			t.Fatalf("PROTOBUF has no %s", k)
		}
	}
	prop := func(name string) string {
		return `<` + regexp.QuoteMeta(name) + `>([^<]*)</` + regexp.QuoteMeta(name) + `>`
	}

	// Java: the runtime depends on the newest protobuf-java and generates its
	// own classes with the oldest protoc, so its jar loads on the whole range.
	samePin(t, "runtime-java/pom.xml", prop("protobuf.version"), p["JAVA_PROTOBUF_NEWEST"])
	samePin(t, "runtime-java/pom.xml", prop("protoc.version"), p["JAVA_PROTOBUF_OLDEST"])
	samePin(t, "conformance/toolchain/java/pom.xml", prop("protobuf.version"), p["JAVA_PROTOBUF_NEWEST"])
	samePin(t, "conformance/toolchain/java/toolchain.go", `ProtocVersion = "([^"]*)"`, p["JAVA_PROTOBUF_NEWEST"])
	samePin(t, "conformance/toolchain/java/toolchain.go", `OldestProtocVersion = "([^"]*)"`, p["JAVA_PROTOBUF_OLDEST"])
	for _, f := range []string{"examples/services/java/pom.xml", "internal/cli/initscaffold/templates/java/pom.xml.tmpl"} {
		samePin(t, f, prop("protobuf.version"), p["JAVA_PROTOBUF_NEWEST"])
	}

	// Python: the development toolchain is the newest end; the runtime
	// accepts the whole range.
	for _, pkg := range []string{"protobuf", "grpcio-tools", "types-protobuf"} {
		key := "PYTHON_" + strings.ToUpper(strings.ReplaceAll(pkg, "-", "_")) + "_NEWEST"
		samePin(t, "requirements-dev.txt", `(?m)^`+regexp.QuoteMeta(pkg)+`==(\S+)`, p[key])
	}
	const rt = "runtime-python/pyproject.toml"
	lo, hi := submatch(t, rt, `"protobuf>=([^,"]+),<[^"]*"`), submatch(t, rt, `"protobuf>=[^,"]+,<([^"]*)"`)
	oldest := p["PYTHON_PROTOBUF_OLDEST"]
	if mm := func(v string) string { return strings.Join(strings.SplitN(v, ".", 3)[:2], ".") }; mm(lo) != mm(oldest) || older(t, oldest, lo) {
		t.Errorf("%s: protobuf>=%s; the oldest supported is %s (PROTOBUF): the lower bound must be its release line, at most it", rt, lo, oldest)
	}
	if want := strconv.Itoa(major(t, p["PYTHON_PROTOBUF_NEWEST"]) + 1); hi != want {
		t.Errorf("%s: protobuf <%s; the newest supported is %s (PROTOBUF), so the bound is <%s", rt, hi, p["PYTHON_PROTOBUF_NEWEST"], want)
	}
	for _, f := range []string{"examples/services/python/pyproject.toml", "internal/cli/initscaffold/templates/python/pyproject.toml.tmpl"} {
		samePin(t, f, `"grpcio-tools==([^"]*)"`, p["PYTHON_GRPCIO_TOOLS_NEWEST"])
		samePin(t, f, `"types-protobuf==([^"]*)"`, p["PYTHON_TYPES_PROTOBUF_NEWEST"])
	}

	// Go: one version, required by both modules that link protobuf-go.
	for _, f := range []string{"go.mod", "runtime-go/go.mod"} {
		samePin(t, f, `(?m)^\s*google\.golang\.org/protobuf (\S+)`, p["GO_PROTOBUF"])
	}
}
