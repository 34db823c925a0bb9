// Package java is the conformance executor for generated Java: it builds
// the contract classes for a vector file's protos with conformance/toolchain/java
// and runs every case in one JVM through a small executor program.
package java

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"

	"github.com/msgcontract/msgcontract/codegen/java"
	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/conformance"
	javabuild "github.com/msgcontract/msgcontract/conformance/toolchain/java"
)

//go:embed Executor.java
var executorSource string

// Executor runs vector files in Java with a toolchain its owner shares
// between runs (and closes). The toolchain's End is the end of PROTOBUF's
// Java range it runs on: the zero Shared is the newest (protoc 36.2,
// protobuf-java 4.36.2); for the oldest (protoc 29.0, protobuf-java 4.29.0;
// the same msgcontract runtime jar) give it its own
// &javabuild.Shared{End: javabuild.Oldest}.
type Executor struct {
	Tools *javabuild.Shared
}

// Run generates and compiles Java for vf's protos in workDir and runs every
// case in one JVM, returning one result per case in case order.
func (e Executor) Run(ctx context.Context, vf *conformance.VectorFile, workDir string) ([]conformance.Result, error) {
	tools, err := e.Tools.Tools(ctx)
	if err != nil {
		return nil, err
	}
	set, err := conformance.LoadModel(ctx, vf)
	if err != nil {
		return nil, err
	}
	b, err := tools.Compile(ctx, set, []string{vf.ProtoDir}, workDir, map[string]string{
		"io/msgcontract/conformance/Executor.java": executorSource,
		"io/msgcontract/conformance/Registry.java": registry(set),
	})
	if err != nil {
		return nil, err
	}
	in, err := json.Marshal(vf.Cases)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, b.Tools.Java, "-cp", b.Classpath(), "-XX:TieredStopAtLevel=1", "-Xshare:auto",
		"io.msgcontract.conformance.Executor")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("java executor: %v\n%s", err, stderr.String())
	}
	var results []conformance.Result
	if err := json.Unmarshal(out, &results); err != nil {
		return nil, fmt.Errorf("java executor printed no results: %v\n%s", err, out)
	}
	return results, nil
}

// registry renders the executor's table of every generated contract class.
func registry(set *model.Set) string {
	var events, machines strings.Builder
	for _, f := range set.Files {
		if !f.HasContract() {
			continue
		}
		class := java.Package(f.Desc) + "." + java.ContractClass(f.Desc)
		fmt.Fprintf(&events, "    m.putAll(%s.events());\n", class)
		fmt.Fprintf(&machines, "    m.putAll(%s.stateMachines());\n", class)
	}
	return `package io.msgcontract.conformance;

import io.msgcontract.support.EventSpec;
import io.msgcontract.support.StateMachine;
import java.util.HashMap;
import java.util.Map;

/**
 * Every generated event and state machine of the vector file. A contract
 * class is deprecated when its .proto file is; naming it is no fault here.
 */
@SuppressWarnings("deprecation")
final class Registry {
  static final Map<String, EventSpec<?>> EVENTS = events();
  static final Map<String, StateMachine> STATE_MACHINES = machines();

  private Registry() {}

  private static Map<String, EventSpec<?>> events() {
    Map<String, EventSpec<?>> m = new HashMap<>();
` + events.String() + `    return m;
  }

  private static Map<String, StateMachine> machines() {
    Map<String, StateMachine> m = new HashMap<>();
` + machines.String() + `    return m;
  }
}
`
}
