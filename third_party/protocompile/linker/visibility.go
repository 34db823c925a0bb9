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

package linker

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/msgcontract/msgcontract/third_party/protocompile/ast"
	"github.com/msgcontract/msgcontract/third_party/protocompile/internal"
	"github.com/msgcontract/msgcontract/third_party/protocompile/reporter"
)

// Symbol visibility (edition 2024, msgcontract patch): a message or enum is
// visible from other files unless it is marked "local", or, without a
// modifier, its file's features.default_symbol_visibility makes it local
// (EXPORT_TOP_LEVEL: nested types; LOCAL_ALL and STRICT: all types). Files
// before edition 2024 default to EXPORT_ALL and have no modifiers.

// fileDefaultVisibility is the default_symbol_visibility of file f: the
// file's feature if set, else its edition's default.
func fileDefaultVisibility(f protoreflect.FileDescriptor) descriptorpb.FeatureSet_VisibilityFeature_DefaultSymbolVisibility {
	if f.Syntax() != protoreflect.Editions {
		return descriptorpb.FeatureSet_VisibilityFeature_EXPORT_ALL
	}
	var fdp *descriptorpb.FileDescriptorProto
	if r, ok := f.(*result); ok {
		fdp = r.FileDescriptorProto()
	} else {
		fdp = protodesc.ToFileDescriptorProto(f)
	}
	if v := fdp.GetOptions().GetFeatures().GetDefaultSymbolVisibility(); v != descriptorpb.FeatureSet_VisibilityFeature_DEFAULT_SYMBOL_VISIBILITY_UNKNOWN {
		return v
	}
	if fdp.GetEdition() >= descriptorpb.Edition_EDITION_2024 {
		return descriptorpb.FeatureSet_VisibilityFeature_EXPORT_TOP_LEVEL
	}
	return descriptorpb.FeatureSet_VisibilityFeature_EXPORT_ALL
}

// explicitVisibility is the visibility a message's or enum's modifier sets.
func explicitVisibility(d protoreflect.Descriptor) descriptorpb.SymbolVisibility {
	switch d := d.(type) {
	case *msgDescriptor:
		return d.proto.GetVisibility()
	case *enumDescriptor:
		return d.proto.GetVisibility()
	case protoreflect.MessageDescriptor:
		if d.ParentFile().Syntax() == protoreflect.Editions {
			return protodesc.ToDescriptorProto(d).GetVisibility()
		}
	case protoreflect.EnumDescriptor:
		if d.ParentFile().Syntax() == protoreflect.Editions {
			return protodesc.ToEnumDescriptorProto(d).GetVisibility()
		}
	}
	return descriptorpb.SymbolVisibility_VISIBILITY_UNSET
}

// checkVisible returns an error when d, a message or enum of another file, is
// not visible from file r; nil when it is.
func (r *result) checkVisible(d protoreflect.Descriptor) error {
	file := d.ParentFile()
	if file == nil || file.Path() == r.Path() {
		return nil
	}
	switch explicitVisibility(d) {
	case descriptorpb.SymbolVisibility_VISIBILITY_EXPORT:
		return nil
	case descriptorpb.SymbolVisibility_VISIBILITY_LOCAL:
		return fmt.Errorf("%s is not visible from %q: it is marked 'local' in %q; remove 'local' there (or write 'export') to use it from other files",
			d.FullName(), r.Path(), file.Path())
	}
	def := fileDefaultVisibility(file)
	_, nested := d.Parent().(protoreflect.MessageDescriptor)
	switch def {
	case descriptorpb.FeatureSet_VisibilityFeature_EXPORT_ALL:
		return nil
	case descriptorpb.FeatureSet_VisibilityFeature_EXPORT_TOP_LEVEL:
		if !nested {
			return nil
		}
	}
	return fmt.Errorf("%s is not visible from %q: it is local by default under features.default_symbol_visibility = %s of %q; mark it 'export' there to use it from other files",
		d.FullName(), r.Path(), def, file.Path())
}

// validateStrictVisibility checks the "export" modifiers of nested types in a
// file with features.default_symbol_visibility = STRICT, as protoc does: a
// nested message may not be exported, and a nested enum only inside a
// top-level message that serves as its namespace (no fields, and a single
// reserved range of all field numbers, "reserved 1 to max").
func (r *result) validateStrictVisibility(handler *reporter.Handler) error {
	if fileDefaultVisibility(r) != descriptorpb.FeatureSet_VisibilityFeature_STRICT {
		return nil
	}
	file := r.FileNode()
	var check func(msgs protoreflect.MessageDescriptors, topLevel bool) error
	check = func(msgs protoreflect.MessageDescriptors, topLevel bool) error {
		for i := 0; i < msgs.Len(); i++ {
			md, ok := msgs.Get(i).(*msgDescriptor)
			if !ok {
				continue
			}
			if !topLevel && md.proto.GetVisibility() == descriptorpb.SymbolVisibility_VISIBILITY_EXPORT {
				node := r.MessageNode(md.proto)
				if err := handler.HandleErrorf(file.NodeInfo(visibilityNode(node)), "message %s: a nested message cannot be 'export' under features.default_symbol_visibility = STRICT; move it to the top level (ideally a file of its own) to export it", md.FullName()); err != nil {
					return err
				}
			}
			namespace := topLevel && len(md.proto.GetField()) == 0 && len(md.proto.GetReservedRange()) == 1 &&
				md.proto.GetReservedRange()[0].GetStart() == 1 && md.proto.GetReservedRange()[0].GetEnd() == internal.MaxNormalTag+1
			for j := 0; j < md.Enums().Len(); j++ {
				ed, ok := md.Enums().Get(j).(*enumDescriptor)
				if !ok || ed.proto.GetVisibility() != descriptorpb.SymbolVisibility_VISIBILITY_EXPORT || namespace {
					continue
				}
				node := r.EnumNode(ed.proto)
				if err := handler.HandleErrorf(file.NodeInfo(visibilityNode(node)), "enum %s: a nested enum cannot be 'export' under features.default_symbol_visibility = STRICT; move it to the top level, or nest it in a top-level message that only namespaces it: `local message Outer { export enum %s {...} reserved 1 to max; }`", ed.FullName(), ed.Name()); err != nil {
					return err
				}
			}
			if err := check(md.Messages(), false); err != nil {
				return err
			}
		}
		return nil
	}
	return check(r.Messages(), true)
}

// visibilityNode is the modifier of a message or enum declaration, else the
// declaration.
func visibilityNode(n ast.Node) ast.Node {
	switch n := n.(type) {
	case *ast.MessageNode:
		if n.Visibility != nil {
			return n.Visibility
		}
	case *ast.EnumNode:
		if n.Visibility != nil {
			return n.Visibility
		}
	}
	return n
}
