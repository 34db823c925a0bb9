// Package gengo runs protoc-gen-go's generator as a library on descriptors
// compiled by protocompile, so that .pb.go files can be produced with no
// protoc binary on the machine.
package gengo

import (
	"fmt"
	"os"
	"path/filepath"

	gengo "google.golang.org/protobuf/cmd/protoc-gen-go/internal_gengo"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"
)

// Request builds the CodeGeneratorRequest protoc would send for generating
// the given files: every transitive dependency comes first, in import order.
func Request(parameter string, generate ...protoreflect.FileDescriptor) *pluginpb.CodeGeneratorRequest {
	req := &pluginpb.CodeGeneratorRequest{}
	if parameter != "" {
		req.Parameter = &parameter
	}
	seen := map[string]bool{}
	var add func(fd protoreflect.FileDescriptor)
	add = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		imports := fd.Imports()
		for i := 0; i < imports.Len(); i++ {
			add(imports.Get(i).FileDescriptor)
		}
		req.ProtoFile = append(req.ProtoFile, protodesc.ToFileDescriptorProto(fd))
	}
	for _, fd := range generate {
		add(fd)
		req.FileToGenerate = append(req.FileToGenerate, fd.Path())
	}
	return req
}

// Generate runs protoc-gen-go on req and returns the files it produced.
func Generate(req *pluginpb.CodeGeneratorRequest) ([]*pluginpb.CodeGeneratorResponse_File, error) {
	plugin, err := protogen.Options{}.New(req)
	if err != nil {
		return nil, err
	}
	plugin.SupportedFeatures = gengo.SupportedFeatures
	plugin.SupportedEditionsMinimum = gengo.SupportedEditionsMinimum
	plugin.SupportedEditionsMaximum = gengo.SupportedEditionsMaximum
	for _, f := range plugin.Files {
		if f.Generate {
			gengo.GenerateFile(plugin, f)
		}
	}
	resp := plugin.Response()
	if resp.Error != nil {
		return nil, fmt.Errorf("protoc-gen-go: %s", resp.GetError())
	}
	return resp.File, nil
}

// WriteFiles writes generated files under dir, creating folders as needed.
func WriteFiles(dir string, files []*pluginpb.CodeGeneratorResponse_File) error {
	for _, f := range files {
		path := filepath.Join(dir, filepath.FromSlash(f.GetName()))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(f.GetContent()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Ensure descriptorpb stays linked: protogen needs descriptor.proto's Go
// types registered when a request imports it.
var _ = descriptorpb.File_google_protobuf_descriptor_proto
