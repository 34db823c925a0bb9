// Package profile writes pprof CPU and heap profiles of a command when
// MSGCONTRACT_CPUPROFILE or MSGCONTRACT_MEMPROFILE names a file. Both
// binaries (msgcontract and protoc-gen-msgcontract) call Start first and
// the returned stop before they exit; bench/codegen -profile DIR sets the
// variables. With neither set it does nothing.
package profile

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// Environment variables naming the profile files.
const (
	CPUEnv = "MSGCONTRACT_CPUPROFILE"
	MemEnv = "MSGCONTRACT_MEMPROFILE"
)

// Start begins a CPU profile when CPUEnv is set, and returns the function
// that ends it and writes a heap profile (of every allocation since start,
// see pprof's alloc_space) when MemEnv is set. Errors go to stderr: a
// profile never changes what the command does.
func Start() (stop func()) {
	cpuPath, memPath := os.Getenv(CPUEnv), os.Getenv(MemEnv)
	if cpuPath == "" && memPath == "" {
		return func() {}
	}
	if memPath != "" {
		runtime.MemProfileRate = 64 * 1024
	}
	var cpu *os.File
	if cpuPath != "" {
		f, err := os.Create(cpuPath)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "profile:", err)
		} else {
			cpu = f
		}
	}
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			cpu.Close()
		}
		if memPath != "" {
			// The profile reports allocations up to the last completed
			// collection; one now makes it cover the whole run.
			runtime.GC()
			f, err := os.Create(memPath)
			if err == nil {
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "profile:", err)
			}
		}
	}
}
