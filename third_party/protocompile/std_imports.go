// Copyright 2020-2024 Buf Technologies, Inc.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//      http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package protocompile

import (
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	_ "google.golang.org/protobuf/types/gofeaturespb" // link in packages that include the standard protos included with protoc.
	_ "google.golang.org/protobuf/types/known/anypb"
	_ "google.golang.org/protobuf/types/known/apipb"
	_ "google.golang.org/protobuf/types/known/durationpb"
	_ "google.golang.org/protobuf/types/known/emptypb"
	_ "google.golang.org/protobuf/types/known/fieldmaskpb"
	_ "google.golang.org/protobuf/types/known/sourcecontextpb"
	_ "google.golang.org/protobuf/types/known/structpb"
	_ "google.golang.org/protobuf/types/known/timestamppb"
	_ "google.golang.org/protobuf/types/known/typepb"
	_ "google.golang.org/protobuf/types/known/wrapperspb"
	_ "google.golang.org/protobuf/types/pluginpb"

	"github.com/msgcontract/msgcontract/third_party/protocompile/internal/featuresext"
)

// All files that are included with protoc are also included with this package
// so that clients do not need to explicitly supply a copy of these protos (just
// like callers of protoc do not need to supply them).
//
// msgcontract patch: looked up on first use instead of in init, and the C++
// and Java feature files (built by unmarshalling and linking an embedded
// descriptor set) only when a file imports them, so that a program linking
// this package pays nothing at start-up.
var standardImports = sync.OnceValue(func() map[string]protoreflect.FileDescriptor {
	standardFilenames := []string{
		"google/protobuf/any.proto",
		"google/protobuf/api.proto",
		"google/protobuf/compiler/plugin.proto",
		"google/protobuf/descriptor.proto",
		"google/protobuf/duration.proto",
		"google/protobuf/empty.proto",
		"google/protobuf/field_mask.proto",
		"google/protobuf/go_features.proto",
		"google/protobuf/source_context.proto",
		"google/protobuf/struct.proto",
		"google/protobuf/timestamp.proto",
		"google/protobuf/type.proto",
		"google/protobuf/wrappers.proto",
	}

	imports := map[string]protoreflect.FileDescriptor{}
	for _, fn := range standardFilenames {
		fd, err := protoregistry.GlobalFiles.FindFileByPath(fn)
		if err != nil {
			panic(err.Error())
		}
		imports[fn] = fd
	}
	return imports
})

// otherFeatures are the feature files with no Go code in this module.
var otherFeatures = map[string]func() (protoreflect.FileDescriptor, error){
	"google/protobuf/cpp_features.proto":  featuresext.CppFeaturesDescriptor,
	"google/protobuf/java_features.proto": featuresext.JavaFeaturesDescriptor,
}

// standardImport returns the standard file name, if it is one.
func standardImport(name string) (protoreflect.FileDescriptor, bool) {
	if fd, ok := standardImports()[name]; ok {
		return fd, true
	}
	getDescriptor, ok := otherFeatures[name]
	if !ok {
		return nil, false
	}
	// First see if the program has generated Go code for this
	// file linked in:
	if fd, err := protoregistry.GlobalFiles.FindFileByPath(name); err == nil {
		return fd, true
	}
	fd, err := getDescriptor()
	if err != nil {
		// For these extensions to FeatureSet, we are lenient. If
		// we can't load them, just ignore them.
		return nil, false
	}
	return fd, true
}
