// Package protocin hands protoc the feature files msgcontract's loader
// knows but a protoc include directory may lack.
//
// google/protobuf/go_features.proto, cpp_features.proto and
// java_features.proto are standard imports of the loader (protocompile
// provides them, in the versions of google.golang.org/protobuf and protoc
// 36.2). protoc has none built in: the protobuf-java jar ships only
// java_features.proto (and an old one in old jars), grpcio-tools ships
// neither. A contract that imports them, usually as edition 2024's
// `import option`, compiles with msgcontract but not with protoc given
// only -I. Args writes them as a FileDescriptorSet for protoc's
// --descriptor_set_in, which protoc consults before its -I directories.
package protocin

import (
	"fmt"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/msgcontract/msgcontract/codegen/model"
)

// features are the language feature files Args hands to protoc.
var features = []string{
	"google/protobuf/cpp_features.proto",
	"google/protobuf/go_features.proto",
	"google/protobuf/java_features.proto",
}

// Args returns protoc's --descriptor_set_in argument for the feature files
// set compiled (nil when it compiled none), writing the descriptor set
// into dir.
func Args(set *model.Set, dir string) ([]string, error) {
	var out descriptorpb.FileDescriptorSet
	for _, path := range features {
		fd, err := set.Registry.FindFileByPath(path)
		if err != nil {
			continue // not imported by any file of the set
		}
		// Each imports descriptor.proto alone, which protoc has built in.
		for i := 0; i < fd.Imports().Len(); i++ {
			if imp := fd.Imports().Get(i).Path(); imp != "google/protobuf/descriptor.proto" {
				return nil, fmt.Errorf("protoc's feature files: %s imports %s, which the descriptor set does not carry", path, imp)
			}
		}
		out.File = append(out.File, protodesc.ToFileDescriptorProto(fd))
	}
	if len(out.File) == 0 {
		return nil, nil
	}
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(&out)
	if err != nil {
		return nil, err
	}
	file := filepath.Join(dir, "features.binpb")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		return nil, fmt.Errorf("protoc's feature files: %w", err)
	}
	return []string{"--descriptor_set_in=" + file}, nil
}
