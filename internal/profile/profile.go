// Package profile writes pprof CPU and heap profiles of a command when
// MSGCONTRACT_CPUPROFILE or MSGCONTRACT_MEMPROFILE names a file. Both
// binaries (msgcontract and protoc-gen-msgcontract) call Start first and
// the returned stop before they exit; bench/codegen -profile DIR sets the
// variables. With neither set it does nothing.
package profile

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// Environment variables naming the profile files.
const (
	CPUEnv = "MSGCONTRACT_CPUPROFILE"
	MemEnv = "MSGCONTRACT_MEMPROFILE"
	// PeakEnv names a heap profile of what is live at the run's peak:
	// every PeakEvery a full collection measures the live heap, and the
	// profile taken at the largest one is written (pprof's inuse_space).
	// The collections slow the run down; use it to see what is held,
	// never to time.
	PeakEnv = "MSGCONTRACT_PEAKPROFILE"
)

// PeakEvery is how often PeakEnv's sampler collects.
const PeakEvery = 10 * time.Millisecond

// Start begins a CPU profile when CPUEnv is set, and returns the function
// that ends it and writes a heap profile (of every allocation since start,
// see pprof's alloc_space) when MemEnv is set. Errors go to stderr: a
// profile never changes what the command does.
func Start() (stop func()) {
	cpuPath, memPath, peakPath := os.Getenv(CPUEnv), os.Getenv(MemEnv), os.Getenv(PeakEnv)
	if cpuPath == "" && memPath == "" && peakPath == "" {
		return func() {}
	}
	stopPeak := func() {}
	if peakPath != "" {
		stopPeak = peak(peakPath)
	}
	if memPath != "" || peakPath != "" {
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
		stopPeak()
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

// peak samples the live heap every PeakEvery until the returned function
// is called, which writes the heap profile taken at the largest sample
// to path and reports that size on stderr.
func peak(path string) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	var (
		best    bytes.Buffer
		bestLen uint64
	)
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	sample := func() {
		runtime.GC()
		metrics.Read(live)
		n := live[0].Value.Uint64()
		if n > bestLen {
			bestLen = n
			best.Reset()
			if err := pprof.Lookup("heap").WriteTo(&best, 0); err != nil {
				fmt.Fprintln(os.Stderr, "profile:", err)
			}
		}
	}
	go func() {
		defer close(finished)
		t := time.NewTicker(PeakEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		fmt.Fprintf(os.Stderr, "profile: peak live heap %.1f MiB\n", float64(bestLen)/(1<<20))
		if err := os.WriteFile(path, best.Bytes(), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "profile:", err)
		}
	}
}
