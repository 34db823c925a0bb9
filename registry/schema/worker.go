package schema

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/registry/subjectref"
)

// A compilation cannot be stopped inside a protocompile phase, so a
// schema that takes seconds to compile keeps a core busy after its client
// is answered. A Pool compiles client-supplied schemas in child processes
// instead — the same binary, re-executed with workerEnv set — which it
// kills when the request's context ends: the CPU they spend stops with it.
// The children run at nice 19 under RLIMIT_CPU and RLIMIT_AS, so even one
// the parent fails to kill is bounded.

// workerEnv, set in a child's environment, makes RunWorkerIfAsked serve
// compilations instead of returning.
const workerEnv = "MSGCONTRACT_SCHEMA_WORKER"

// Limits of a worker process. A warm worker serves many compilations:
// it retires once it has used retireCPU, so RLIMIT_CPU (cpuLimit) stops
// only a worker that runs away, never an ordinary one between requests.
// retireCPU plus the longest compilation (a registration's 30 s budget)
// stays below cpuLimit.
const (
	cpuLimit  = 64 * time.Second
	retireCPU = 30 * time.Second
	// MemoryLimit is a worker's address space (RLIMIT_AS). A 4 MiB
	// one-line schema compiles in about 1.2 GB (measured); Go reserves
	// some address space it never touches.
	MemoryLimit = 3 << 30
)

// RunWorkerIfAsked turns this process into a compilation worker when a
// Pool started it, and never returns then; otherwise it returns at once.
// Every program that uses a Pool calls it first thing in main (and tests,
// in TestMain), since the Pool re-executes the running binary.
func RunWorkerIfAsked() {
	if os.Getenv(workerEnv) == "" {
		return
	}
	os.Exit(serveWorker(os.NewFile(3, "requests"), os.NewFile(4, "answers")))
}

// workRequest is one compilation a Pool asks of a worker.
type workRequest struct {
	Name, Raw string
	Sources   map[string]string
}

// workAnswer is a worker's result: what Parse returns, with the compiled
// files as descriptors carrying source info, so that the parent rebuilds
// the model without compiling.
type workAnswer struct {
	Hello      bool // the first message: the worker is ready
	Invalid    []string
	Err        string
	Text       string
	Descriptor []byte
	// Files are the FileDescriptorProtos of the schema and of the imports
	// that are not linked into the binary, dependencies first.
	Files     [][]byte
	Positions *positions
	// Retire says the worker has used its CPU allowance and exits.
	Retire bool
}

func serveWorker(in, out *os.File) int {
	limitSelf()
	enc, dec := gob.NewEncoder(out), gob.NewDecoder(in)
	if err := enc.Encode(workAnswer{Hello: true}); err != nil {
		return 1
	}
	for {
		var req workRequest
		if err := dec.Decode(&req); err != nil {
			return 0 // the pool closed our input: it is done with us
		}
		ans := work(req)
		ans.Retire = selfCPU() > retireCPU
		if err := enc.Encode(ans); err != nil || ans.Retire {
			return 0
		}
	}
}

func work(req workRequest) (ans workAnswer) {
	defer func() {
		if p := recover(); p != nil {
			ans = workAnswer{Err: fmt.Sprintf("compiling the schema panicked: %v", p)}
		}
	}()
	p, err := compile(context.Background(), req.Name, req.Raw, req.Sources)
	var inv *InvalidError
	switch {
	case errors.As(err, &inv):
		return workAnswer{Invalid: inv.Lines}
	case err != nil:
		return workAnswer{Err: err.Error()}
	}
	ans = workAnswer{Text: p.Text, Descriptor: p.Descriptor, Positions: positionsOf(p.Set.Files[0])}
	seen := map[string]bool{}
	root := p.Set.Files[0].Desc
	var add func(fd protoreflect.FileDescriptor) error
	add = func(fd protoreflect.FileDescriptor) error {
		if seen[fd.Path()] {
			return nil
		}
		seen[fd.Path()] = true
		// The schema itself is always sent, even when it is a built-in
		// file registered as a subject of its own (a Confluent client
		// registers google/protobuf/timestamp.proto so): the answer must
		// describe what was compiled.
		if fd != root && linked(fd.Path()) {
			return nil
		}
		imps := fd.Imports()
		for i := 0; i < imps.Len(); i++ {
			if err := add(imps.Get(i).FileDescriptor); err != nil {
				return err
			}
		}
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(protodesc.ToFileDescriptorProto(fd))
		ans.Files = append(ans.Files, b)
		return err
	}
	if err := add(root); err != nil {
		return workAnswer{Err: err.Error()}
	}
	return ans
}

// linked reports whether path is a built-in file whose descriptor this
// binary links in: the worker does not send it, the parent has it too.
func linked(path string) bool {
	if !strings.HasPrefix(path, "google/protobuf/") && !strings.HasPrefix(path, "msgcontract/v1/") {
		return false
	}
	_, err := protoregistry.GlobalFiles.FindFileByPath(path)
	return err == nil
}

// rebuild turns a worker's answer into what Parse returns: the files are
// linked from their descriptors (linear in their size: no parsing), the
// model is built from them, and the positions the worker found in the
// source are put back where source info has none (option fields).
func rebuild(name string, ans *workAnswer) (*Parsed, error) {
	files := &protoregistry.Files{}
	var register func(fd protoreflect.FileDescriptor) error
	register = func(fd protoreflect.FileDescriptor) error {
		if _, err := files.FindFileByPath(fd.Path()); err == nil {
			return nil
		}
		imps := fd.Imports()
		for i := 0; i < imps.Len(); i++ {
			if err := register(imps.Get(i).FileDescriptor); err != nil {
				return err
			}
		}
		return files.RegisterFile(fd)
	}
	// Options are read with every extension the files declare, as the
	// compiler read them: an editions feature of pb.java, say, would
	// otherwise stay an unknown field.
	opts := proto.UnmarshalOptions{Resolver: types{dynamicpb.NewTypes(files)}}
	var last protoreflect.FileDescriptor
	for _, b := range ans.Files {
		fdp := &descriptorpb.FileDescriptorProto{}
		if err := opts.Unmarshal(b, fdp); err != nil {
			return nil, err
		}
		for _, dep := range fdp.GetDependency() {
			if _, err := files.FindFileByPath(dep); err == nil {
				continue
			}
			fd, err := protoregistry.GlobalFiles.FindFileByPath(dep)
			if err != nil {
				return nil, fmt.Errorf("the worker did not send import %s", dep)
			}
			if err := register(fd); err != nil {
				return nil, err
			}
		}
		fd, err := protodesc.NewFile(fdp, files)
		if err != nil {
			return nil, err
		}
		if err := files.RegisterFile(fd); err != nil {
			return nil, err
		}
		last = fd
	}
	if last == nil || last.Path() != name {
		return nil, fmt.Errorf("the worker sent no descriptor for %s", name)
	}
	set, err := model.FromFiles(last)
	if err != nil {
		return nil, err
	}
	// The worker applied the contract rules with the source at hand;
	// rules that look at what was written (an empty biz_key) can only be
	// judged there.
	set.Diagnostics = nil
	ans.Positions.apply(set.Files[0])
	return &Parsed{Name: name, Text: ans.Text, Set: set, Descriptor: ans.Descriptor}, nil
}

// types resolves extensions linked into the binary as their Go types,
// and the others as dynamic ones.
type types struct{ dynamic *dynamicpb.Types }

func (t types) FindExtensionByName(name protoreflect.FullName) (protoreflect.ExtensionType, error) {
	if xt, err := protoregistry.GlobalTypes.FindExtensionByName(name); err == nil {
		return xt, nil
	}
	return t.dynamic.FindExtensionByName(name)
}

func (t types) FindExtensionByNumber(message protoreflect.FullName, field protoreflect.FieldNumber) (protoreflect.ExtensionType, error) {
	if xt, err := protoregistry.GlobalTypes.FindExtensionByNumber(message, field); err == nil {
		return xt, nil
	}
	return t.dynamic.FindExtensionByNumber(message, field)
}

// PoolStats counts what a Pool's workers did.
type PoolStats struct {
	// Started counts worker processes started; Killed those killed
	// because their request's context ended mid-compilation.
	Started, Killed int
	// CPU is the CPU time (user and system) of every worker, ended or
	// running: what compiling client-supplied schemas has cost.
	CPU time.Duration
}

// Pool compiles schemas in worker processes, keeping up to size idle
// ones warm. It does not bound how many compile at once: its callers
// do (the registry's compile gate). The zero Pool is not usable; see
// NewPool.
type Pool struct {
	size int
	exe  string
	args []string
	idle chan *worker

	mu     sync.Mutex
	live   map[*worker]bool
	ended  time.Duration // CPU of workers that have exited
	stats  PoolStats
	closed bool
}

// NewPool returns a Pool that keeps up to size idle workers. Workers
// start on first use.
func NewPool(size int) (*Pool, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("schema workers re-execute this program: %w", err)
	}
	var args []string
	if strings.HasSuffix(filepath.Base(exe), ".test") {
		// A test binary whose TestMain forgot RunWorkerIfAsked must not
		// run its tests again in every worker.
		args = []string{"-test.run=^$", "-test.bench=^$", "-test.fuzz=^$"}
	}
	return &Pool{size: max(size, 1), exe: exe, args: args, idle: make(chan *worker, max(size, 1)), live: map[*worker]bool{}}, nil
}

// Warm starts idle workers up to the pool's size, so that the first
// requests do not wait for a process to start.
func (p *Pool) Warm() error {
	for range p.size {
		w, err := p.start()
		if err != nil {
			return err
		}
		p.put(w)
	}
	return nil
}

// Parse is schema.Parse with the compilation in a worker process (see
// Compile).
func (p *Pool) Parse(ctx context.Context, name, raw string, refs []subjectref.Reference, fetch Fetcher) (*Parsed, error) {
	src, err := Fetch(ctx, name, raw, refs, fetch)
	if err != nil {
		return nil, err
	}
	return p.Compile(ctx, src)
}

// Compile is src.Compile in a worker process. When ctx ends first the
// worker is killed and ctx's error returned. A worker that dies by itself
// (its memory or CPU limit) yields an *InvalidError saying so.
func (p *Pool) Compile(ctx context.Context, src *Source) (*Parsed, error) {
	parsed, err, unsent := p.compile(ctx, src)
	if unsent {
		// The idle worker had died (killed from outside, say) before it
		// could take the request: one new worker gets it.
		parsed, err, _ = p.compile(ctx, src)
	}
	return parsed, err
}

// compile is one attempt of Compile; unsent says the worker was gone
// before the request reached it.
func (p *Pool) compile(ctx context.Context, src *Source) (_ *Parsed, _ error, unsent bool) {
	name := src.Name
	w, err := p.get(ctx)
	if err != nil {
		return nil, err, false
	}
	type result struct {
		ans    workAnswer
		err    error
		unsent bool
	}
	done := make(chan result, 1)
	go func() {
		var r result
		if r.err = w.enc.Encode(workRequest{Name: name, Raw: src.Raw, Sources: src.Sources}); r.err == nil {
			r.err = w.dec.Decode(&r.ans)
		} else {
			r.unsent = true
		}
		done <- r
	}()
	select {
	case <-ctx.Done():
		_ = w.cmd.Process.Kill()
		<-done
		p.end(w, true)
		p.replace()
		return nil, ctx.Err(), false
	case r := <-done:
		if r.err != nil {
			_ = w.cmd.Process.Kill()
			p.end(w, false)
			p.replace()
			if ctx.Err() != nil {
				return nil, ctx.Err(), false
			}
			return nil, w.died(r.err), r.unsent
		}
		if r.ans.Retire {
			p.end(w, false)
			p.replace()
		} else {
			p.put(w)
		}
		switch {
		case r.ans.Invalid != nil:
			return nil, &InvalidError{Lines: r.ans.Invalid}, false
		case r.ans.Err != "":
			return nil, errors.New(r.ans.Err), false
		}
		parsed, err := rebuild(name, &r.ans)
		if err != nil {
			return nil, err, false
		}
		parsed.Fingerprint = src.Fingerprint
		return parsed, nil, false
	}
}

// Stats returns what the pool's workers have done so far.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.stats
	st.CPU = p.ended
	for w := range p.live {
		st.CPU += procCPU(w.cmd.Process.Pid)
	}
	return st
}

// Close ends every worker; Parse must not be called after it.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	ws := make([]*worker, 0, len(p.live))
	for w := range p.live {
		ws = append(ws, w)
	}
	p.mu.Unlock()
	for _, w := range ws {
		_ = w.cmd.Process.Kill()
		p.end(w, false)
	}
}

type worker struct {
	cmd    *exec.Cmd
	enc    *gob.Encoder
	dec    *gob.Decoder
	in     io.Closer // our end of the worker's requests
	stderr *headBuffer
	ended  sync.Once
}

// get returns an idle worker, or starts one.
func (p *Pool) get(ctx context.Context) (*worker, error) {
	select {
	case w := <-p.idle:
		return w, nil
	default:
	}
	type started struct {
		w   *worker
		err error
	}
	ch := make(chan started, 1)
	go func() {
		w, err := p.start()
		ch <- started{w, err}
	}()
	select {
	case s := <-ch:
		return s.w, s.err
	case w := <-p.idle: // one came back first; keep the new one for later
		go func() {
			if s := <-ch; s.err == nil {
				p.put(s.w)
			}
		}()
		return w, nil
	case <-ctx.Done():
		go func() {
			if s := <-ch; s.err == nil {
				p.put(s.w)
			}
		}()
		return nil, ctx.Err()
	}
}

// put keeps w warm, or ends it when the pool has enough idle workers.
func (p *Pool) put(w *worker) {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if !closed {
		select {
		case p.idle <- w:
			return
		default:
		}
	}
	p.end(w, false)
}

// replace starts a worker in the background for the one that ended, so
// that the next request finds one warm.
func (p *Pool) replace() {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed || len(p.idle) >= p.size {
		return
	}
	go func() {
		if w, err := p.start(); err == nil {
			p.put(w)
		}
	}()
}

// helloTimeout bounds how long a new worker may take to start.
const helloTimeout = 30 * time.Second

func (p *Pool) start() (*worker, error) {
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	ansR, ansW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		return nil, err
	}
	cmd := exec.Command(p.exe, p.args...)
	cmd.Env = append(os.Environ(), workerEnv+"=1")
	cmd.ExtraFiles = []*os.File{reqR, ansW}
	w := &worker{cmd: cmd, enc: gob.NewEncoder(reqW), dec: gob.NewDecoder(ansR), in: reqW, stderr: &headBuffer{max: 4 << 10}}
	cmd.Stderr = w.stderr
	err = cmd.Start()
	reqR.Close()
	ansW.Close()
	if err != nil {
		reqW.Close()
		ansR.Close()
		return nil, fmt.Errorf("starting a schema worker: %w", err)
	}
	p.mu.Lock()
	p.live[w] = true
	p.stats.Started++
	p.mu.Unlock()
	hello := make(chan error, 1)
	go func() {
		var a workAnswer
		err := w.dec.Decode(&a)
		if err == nil && !a.Hello {
			err = errors.New("unexpected first message")
		}
		hello <- err
	}()
	t := time.NewTimer(helloTimeout)
	defer t.Stop()
	select {
	case err = <-hello:
	case <-t.C:
		err = errors.New("no answer in " + helloTimeout.String())
	}
	if err != nil {
		_ = cmd.Process.Kill()
		p.end(w, false)
		return nil, fmt.Errorf("a schema worker did not start (does %s call schema.RunWorkerIfAsked first?): %v %s", p.exe, err, w.stderr)
	}
	return w, nil
}

// end closes w's input (a worker exits when it reads EOF), reaps it and
// adds its CPU time to the pool's.
func (p *Pool) end(w *worker, killed bool) {
	w.ended.Do(func() {
		w.in.Close()
		_ = w.cmd.Wait() // also closes our end of its answers
		p.mu.Lock()
		defer p.mu.Unlock()
		delete(p.live, w)
		if st := w.cmd.ProcessState; st != nil {
			p.ended += st.UserTime() + st.SystemTime()
		}
		if killed {
			p.stats.Killed++
		}
	})
}

// died explains a worker that stopped answering by itself.
func (w *worker) died(err error) error {
	st := w.cmd.ProcessState
	why := err.Error()
	if st != nil {
		why = st.String()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() && (ws.Signal() == syscall.SIGXCPU || ws.Signal() == syscall.SIGKILL) {
			return &InvalidError{Lines: []string{fmt.Sprintf("compiling the schema exceeded the compiler's CPU limit (%v); split the file", cpuLimit)}}
		}
	}
	if strings.Contains(w.stderr.String(), "out of memory") {
		return &InvalidError{Lines: []string{fmt.Sprintf("compiling the schema exceeded the compiler's memory limit (%d MiB); split the file", MemoryLimit>>20)}}
	}
	return fmt.Errorf("the schema worker ended without an answer (%s): %s", why, strings.TrimSpace(w.stderr.String()))
}

// headBuffer keeps the first max bytes written to it.
type headBuffer struct {
	mu  sync.Mutex
	max int
	b   bytes.Buffer
}

func (h *headBuffer) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.max - h.b.Len(); room > 0 {
		h.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (h *headBuffer) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.b.String()
}
