// Package schema turns a schema as clients register it — .proto text, or a
// base64-encoded FileDescriptorProto as Confluent's serializers send it —
// into .proto text, a compiled contract model and the serialized descriptor.
// Imports of msgcontract/v1/options.proto, the well-known types and the
// dependencies Confluent's serializers treat as built in (google/type,
// confluent/meta.proto, confluent/type/decimal.proto: see Builtins)
// resolve without references; every other import names a Confluent-style
// reference.
package schema

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	//lint:ignore SA1019 protoprint (the one printer of descriptors that keeps comments and options as written) takes desc's descriptors; nothing else of v1 is used.
	"github.com/jhump/protoreflect/desc"
	"github.com/jhump/protoreflect/desc/protoprint"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/registry/subjectref"
)

// Type is the one schema type the registry accepts.
const Type = "PROTOBUF"

// MaxReferenceDepth bounds chains of references, which also stops cycles.
const MaxReferenceDepth = 32

// InvalidError is a schema that cannot be parsed, compiled or resolved, or
// a contract that breaks msgcontract's rules. Each line is one problem.
type InvalidError struct {
	Lines []string
}

func (e *InvalidError) Error() string { return strings.Join(e.Lines, "\n") }

func invalid(format string, args ...any) error {
	return &InvalidError{Lines: []string{fmt.Sprintf(format, args...)}}
}

// Fetcher returns the schema text and references of a subject's version;
// subjectref.Latest asks for the newest. Its errors are returned as they are,
// so the caller can tell a missing reference from a broken store.
type Fetcher func(ctx context.Context, subject string, version int) (text string, refs []subjectref.Reference, err error)

// Parsed is a schema ready to store and check.
type Parsed struct {
	// Name is the file name the schema was compiled as; positions in
	// violations use it.
	Name string
	// Text is the .proto source GET returns.
	Text string
	// Set is the compiled model; Set.Files[0] is the schema itself.
	Set *model.Set
	// Descriptor is the serialized FileDescriptorProto, without source
	// info, as ?format=serialized returns it.
	Descriptor []byte
	// Fingerprint is a hash of everything the compiled result depends
	// on: the name, the schema as sent and the text of every reference.
	// Two schemas with one fingerprint compile alike, positions included.
	Fingerprint [32]byte
}

// fingerprint hashes what compile compiles.
func fingerprint(name, raw string, sources map[string]string) [32]byte {
	h := sha256.New()
	write := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	write(name)
	write(raw)
	paths := make([]string, 0, len(sources))
	for p := range sources {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		write(p)
		write(sources[p])
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// Parse reads raw (text or base64 descriptor), resolves refs through
// fetch, compiles the result as file name and checks the contract rules. A problem with the schema itself
// is an *InvalidError.
func Parse(ctx context.Context, name, raw string, refs []subjectref.Reference, fetch Fetcher) (*Parsed, error) {
	src, err := Fetch(ctx, name, raw, refs, fetch)
	if err != nil {
		return nil, err
	}
	return src.Compile(ctx)
}

// Source is a schema as a client sent it, with the text of its references
// fetched: everything compiling it depends on, and its fingerprint.
type Source struct {
	Name, Raw string
	// Sources are the references' texts by import path.
	Sources     map[string]string
	Fingerprint [32]byte
}

// Fetch is the first half of Parse: it refuses an empty schema and
// fetches the text of refs, and of theirs, through fetch.
func Fetch(ctx context.Context, name, raw string, refs []subjectref.Reference, fetch Fetcher) (*Source, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, invalid("the schema is empty; send .proto text or a base64-encoded FileDescriptorProto in \"schema\"")
	}
	sources := map[string]string{}
	if err := resolve(ctx, refs, fetch, sources, 0); err != nil {
		return nil, err
	}
	return &Source{Name: name, Raw: raw, Sources: sources, Fingerprint: fingerprint(name, raw, sources)}, nil
}

// Compile is the second half of Parse, in this process.
func (src *Source) Compile(ctx context.Context) (*Parsed, error) {
	p, err := compile(ctx, src.Name, src.Raw, src.Sources)
	if err != nil {
		return nil, err
	}
	p.Fingerprint = src.Fingerprint
	return p, nil
}

// compile is Parse once the references are fetched: the part that costs
// CPU in proportion to what the client sent, which a Pool's workers run.
func compile(ctx context.Context, name, raw string, refSources map[string]string) (*Parsed, error) {
	sources := withBuiltins(refSources)
	text := raw
	if fdp, ok := decodeDescriptor(raw); ok {
		printed, err := printDescriptor(ctx, fdp, sources)
		if err != nil {
			return nil, err
		}
		// The file keeps the subject's name, not the one in the
		// descriptor: the text and descriptor forms of one schema then
		// compile to the same descriptor, whatever file name the sending
		// client had.
		text = printed
	}
	sources[name] = text
	set, err := model.Load(ctx, model.Config{Sources: sources, ImportPaths: []string{noImportPath}}, name)
	if err != nil && ctx.Err() != nil {
		// The caller gave up or its deadline passed: not the schema's fault.
		return nil, ctx.Err()
	}
	if err != nil {
		var ce *model.CompileError
		if errors.As(err, &ce) {
			return nil, &InvalidError{Lines: unresolved(ce.Errors, refSources)}
		}
		return nil, &InvalidError{Lines: unresolved([]string{err.Error()}, refSources)}
	}
	if len(set.Diagnostics) > 0 {
		lines := make([]string, len(set.Diagnostics))
		for i, d := range set.Diagnostics {
			lines[i] = d.String()
		}
		return nil, &InvalidError{Lines: lines}
	}
	fdp := protodesc.ToFileDescriptorProto(set.Files[0].Desc)
	fdp.SourceCodeInfo = nil
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(fdp)
	if err != nil {
		return nil, err
	}
	return &Parsed{Name: name, Text: text, Set: set, Descriptor: b}, nil
}

// noImportPath keeps model.Load from reading the working directory: a
// registered schema may only import references and built-in files.
const noImportPath = "\x00msgcontract-registry-no-disk"

// missingImport is the compiler's report of an import nothing supplies,
// with its advice for the command line.
var missingImport = regexp.MustCompile(`^(.*?)could not resolve path "([^"]+)": file does not exist in import paths .*$`)

// unresolved rewrites the compiler's reports of imports nothing supplies
// for an HTTP client: which import, the reference that would supply it
// and the names the references sent have (refs, by import path), without
// the compiler's import path (a sentinel) or its advice for the command
// line.
func unresolved(lines []string, refs map[string]string) []string {
	var names []string
	for n := range refs {
		names = append(names, strconv.Quote(n))
	}
	sort.Strings(names)
	given := "no reference was sent"
	if len(names) > 0 {
		given = "the references sent name " + strings.Join(names, ", ")
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if m := missingImport.FindStringSubmatch(l); m != nil {
			l = fmt.Sprintf(`%simport %q does not resolve: no reference supplies it (%s). Register that file under a subject, then send `+
				`{"name": %q, "subject": "<that subject>", "version": <its version>} in the request's "references"`, m[1], m[2], given, m[2])
		}
		out[i] = strings.NewReplacer(noImportPath, "the request's references", "; add -I with the directory the import is relative to", "").Replace(l)
	}
	return out
}

func resolve(ctx context.Context, refs []subjectref.Reference, fetch Fetcher, sources map[string]string, depth int) error {
	if depth > MaxReferenceDepth {
		return invalid("references nest deeper than %d levels (is there a cycle?)", MaxReferenceDepth)
	}
	for _, r := range refs {
		if r.Name == "" || r.Subject == "" {
			return invalid("reference %+v needs a name (the import path) and a subject", r)
		}
		if _, done := sources[r.Name]; done {
			continue
		}
		if fetch == nil {
			return invalid("reference %q cannot be resolved here", r.Name)
		}
		v := r.Version
		if v <= 0 {
			v = subjectref.Latest
		}
		text, sub, err := fetch(ctx, r.Subject, v)
		if err != nil {
			return err
		}
		raw := text
		if fdp, ok := decodeDescriptor(text); ok {
			sub2 := map[string]string{}
			if err := resolve(ctx, sub, fetch, sub2, depth+1); err != nil {
				return err
			}
			if raw, err = printDescriptor(ctx, fdp, sub2); err != nil {
				return err
			}
		}
		sources[r.Name] = raw
		if err := resolve(ctx, sub, fetch, sources, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// decodeDescriptor recognizes a base64-encoded FileDescriptorProto. .proto
// text always holds spaces or semicolons, which base64 never does.
func decodeDescriptor(raw string) (*descriptorpb.FileDescriptorProto, bool) {
	s := strings.TrimSpace(raw)
	if strings.ContainsAny(s, " \t\n;{") {
		return nil, false
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, false
	}
	fdp := &descriptorpb.FileDescriptorProto{}
	if err := proto.Unmarshal(b, fdp); err != nil {
		return nil, false
	}
	return fdp, true
}

// printDescriptor prints fdp as .proto text. Its imports are compiled from
// sources (or the built-in files) so that custom options print by name.
func printDescriptor(ctx context.Context, fdp *descriptorpb.FileDescriptorProto, sources map[string]string) (string, error) {
	deps := &protoregistry.Files{}
	if n := len(fdp.GetDependency()); n > 0 {
		const stub = "msgcontract-registry-imports.proto"
		var b strings.Builder
		b.WriteString("syntax = \"proto3\";\n")
		imports := append([]string(nil), fdp.GetDependency()...)
		sort.Strings(imports)
		for _, d := range imports {
			fmt.Fprintf(&b, "import %q;\n", d)
		}
		src := withBuiltins(sources)
		src[stub] = b.String()
		set, err := model.Load(ctx, model.Config{Sources: src, ImportPaths: []string{noImportPath}}, stub)
		if err != nil {
			return "", &InvalidError{Lines: append([]string{fmt.Sprintf("descriptor %s: its imports do not resolve; register them and send them as references:", fdp.GetName())},
				unresolved(strings.Split(err.Error(), "\n"), sources)...)}
		}
		deps = set.Registry
	}
	fd, err := protodesc.NewFile(fdp, deps)
	if err != nil {
		return "", invalid("descriptor %s is not valid: %v", fdp.GetName(), err)
	}
	wrapped, err := desc.WrapFile(fd)
	if err != nil {
		return "", invalid("descriptor %s: %v", fdp.GetName(), err)
	}
	var out strings.Builder
	p := protoprint.Printer{}
	if err := p.PrintProtoFile(wrapped, &out); err != nil {
		return "", invalid("descriptor %s cannot be printed as .proto text: %v", fdp.GetName(), err)
	}
	return out.String(), nil
}
