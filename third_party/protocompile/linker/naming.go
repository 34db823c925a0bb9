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
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/msgcontract/msgcontract/third_party/protocompile/ast"
	"github.com/msgcontract/msgcontract/third_party/protocompile/protoutil"
	"github.com/msgcontract/msgcontract/third_party/protocompile/reporter"
)

// Naming style (edition 2024, msgcontract patch): under
// features.enforce_naming_style = STYLE2024, resolved per element like any
// feature, names must be written as protoc 36.2 requires: messages, enums,
// services and methods in TitleCase, fields, oneofs and the package in
// lower_snake_case, enum values in UPPER_SNAKE_CASE.

var enforceNamingStyleField = (*descriptorpb.FeatureSet)(nil).ProtoReflect().Descriptor().Fields().ByName("enforce_naming_style")

const namingOptOut = "; features.enforce_naming_style = STYLE_LEGACY turns this check off"

func style2024(d protoreflect.Descriptor) bool {
	v, err := protoutil.ResolveFeature(d, enforceNamingStyleField)
	return err == nil && descriptorpb.FeatureSet_EnforceNamingStyle(v.Enum()) == descriptorpb.FeatureSet_STYLE2024
}

// checkTitleCase is the rule for messages, enums, services and methods.
func checkTitleCase(name string) string {
	for i := 0; i < len(name); i++ {
		if name[i] == '_' {
			return "should be TitleCase, without underscores"
		}
	}
	if name == "" || !isUpper(name[0]) {
		return "should begin with a capital letter (TitleCase)"
	}
	return ""
}

// checkSnakeCase is the rule for fields, oneofs and packages (upper false)
// and for enum values (upper true): no letter of the other case, a letter
// first, and every underscore followed by a letter.
func checkSnakeCase(name string, upper bool) string {
	style, wrongCase, rightCase := "lower_snake_case", isUpper, isLower
	article := "a lower case"
	if upper {
		style, wrongCase, rightCase = "UPPER_SNAKE_CASE", isLower, isUpper
		article = "an upper case"
	}
	for i := 0; i < len(name); i++ {
		if wrongCase(name[i]) {
			return "should be " + style
		}
	}
	if name == "" || !rightCase(name[0]) {
		return "should begin with " + article + " letter (" + style + ")"
	}
	for i := 0; i < len(name); i++ {
		if name[i] == '_' && (i+1 == len(name) || !rightCase(name[i+1])) {
			return "contains an underscore not followed by a letter (" + style + " has a letter after each underscore)"
		}
	}
	return ""
}

// nameWords splits a name into words: at underscores and dots, where a
// lower-case letter or digit is followed by an upper-case one, and before the
// last capital of an acronym followed by a lower-case letter (HTTPServer:
// HTTP, Server). A digit stays with the word before it.
func nameWords(name string) []string {
	var words []string
	start := -1
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' || c == '.' {
			if start >= 0 {
				words = append(words, name[start:i])
				start = -1
			}
			continue
		}
		if start >= 0 && isUpper(c) {
			prev := name[i-1]
			if isLower(prev) || (prev >= '0' && prev <= '9') || (isUpper(prev) && i+1 < len(name) && isLower(name[i+1])) {
				words = append(words, name[start:i])
				start = i
			}
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		words = append(words, name[start:])
	}
	return words
}

// suggestName is ", e.g. NAME" with the name written in the style of its
// kind, or "" when no such name passes the check.
func suggestName(what, name string) string {
	words := nameWords(name)
	if what == "package" {
		// keep the dots
		var parts []string
		for _, comp := range strings.Split(name, ".") {
			parts = append(parts, strings.ToLower(strings.Join(nameWords(comp), "_")))
		}
		if s := strings.Join(parts, "."); s != name && checkSnakeCase(s, false) == "" {
			return ", e.g. " + s
		}
		return ""
	}
	var s string
	var problem string
	switch what {
	case "message", "enum", "service", "method":
		for _, w := range words {
			s += strings.ToUpper(w[:1]) + strings.ToLower(w[1:])
		}
		problem = checkTitleCase(s)
	case "enum value":
		s = strings.ToUpper(strings.Join(words, "_"))
		problem = checkSnakeCase(s, true)
	default:
		s = strings.ToLower(strings.Join(words, "_"))
		problem = checkSnakeCase(s, false)
	}
	if problem != "" {
		// an underscore before a digit: join the digit to its word
		for i := 0; i+1 < len(s); i++ {
			if s[i] == '_' && s[i+1] >= '0' && s[i+1] <= '9' {
				s = s[:i] + s[i+1:]
				i--
			}
		}
		if what == "enum value" {
			problem = checkSnakeCase(s, true)
		} else if what == "message" || what == "enum" || what == "service" || what == "method" {
			problem = checkTitleCase(s)
		} else {
			problem = checkSnakeCase(s, false)
		}
	}
	if problem != "" || s == name {
		return ""
	}
	return ", e.g. " + s
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }

// validateNamingStyle checks the names of a file of edition 2024 or later.
func (r *result) validateNamingStyle(handler *reporter.Handler) error {
	if descriptorpb.Edition(r.Edition()) < descriptorpb.Edition_EDITION_2024 {
		return nil
	}
	file := r.FileNode()
	report := func(node ast.Node, what, name, problem string) error {
		return handler.HandleErrorf(file.NodeInfo(node), "%s name %s %s%s%s", what, name, problem, suggestName(what, name), namingOptOut)
	}
	if pkg := string(r.Package()); pkg != "" && style2024(r) {
		if problem := checkSnakeCase(pkg, false); problem != "" {
			var node ast.Node = file
			if f, ok := file.(*ast.FileNode); ok {
				for _, decl := range f.Decls {
					if p, ok := decl.(*ast.PackageNode); ok {
						node = p
						break
					}
				}
			}
			if err := report(node, "package", pkg, problem); err != nil {
				return err
			}
		}
	}
	return r.validateNamingStyleIn(r.Messages(), r.Enums(), r.Extensions(), handler, report)
}

func (r *result) validateNamingStyleIn(msgs protoreflect.MessageDescriptors, enums protoreflect.EnumDescriptors, exts protoreflect.ExtensionDescriptors,
	handler *reporter.Handler, report func(ast.Node, string, string, string) error) error {
	for i := 0; i < msgs.Len(); i++ {
		md, ok := msgs.Get(i).(*msgDescriptor)
		if !ok || md.IsMapEntry() {
			continue
		}
		if style2024(md) {
			if problem := checkTitleCase(string(md.Name())); problem != "" {
				if err := report(r.MessageNode(md.proto).MessageName(), "message", string(md.Name()), problem); err != nil {
					return err
				}
			}
		}
		for j := 0; j < md.Fields().Len(); j++ {
			if err := r.checkFieldName(md.Fields().Get(j), report); err != nil {
				return err
			}
		}
		for j := 0; j < md.Oneofs().Len(); j++ {
			oo, ok := md.Oneofs().Get(j).(*oneofDescriptor)
			if !ok || oo.IsSynthetic() || !style2024(oo) {
				continue
			}
			if problem := checkSnakeCase(string(oo.Name()), false); problem != "" {
				if err := report(nameNode(r.OneofNode(oo.proto)), "oneof", string(oo.Name()), problem); err != nil {
					return err
				}
			}
		}
		if err := r.validateNamingStyleIn(md.Messages(), md.Enums(), md.Extensions(), handler, report); err != nil {
			return err
		}
	}
	for i := 0; i < enums.Len(); i++ {
		ed, ok := enums.Get(i).(*enumDescriptor)
		if !ok {
			continue
		}
		if style2024(ed) {
			if problem := checkTitleCase(string(ed.Name())); problem != "" {
				if err := report(nameNode(r.EnumNode(ed.proto)), "enum", string(ed.Name()), problem); err != nil {
					return err
				}
			}
		}
		for j := 0; j < ed.Values().Len(); j++ {
			vd, ok := ed.Values().Get(j).(*enValDescriptor)
			if !ok || !style2024(vd) {
				continue
			}
			if problem := checkSnakeCase(string(vd.Name()), true); problem != "" {
				if err := report(r.EnumValueNode(vd.proto).GetName(), "enum value", string(vd.Name()), problem); err != nil {
					return err
				}
			}
		}
	}
	for i := 0; i < exts.Len(); i++ {
		if err := r.checkFieldName(exts.Get(i), report); err != nil {
			return err
		}
	}
	return nil
}

func (r *result) checkFieldName(fld protoreflect.FieldDescriptor, report func(ast.Node, string, string, string) error) error {
	var fdp *descriptorpb.FieldDescriptorProto
	switch fld := fld.(type) {
	case *fldDescriptor:
		fdp = fld.proto
	case *extTypeDescriptor:
		fdp = fld.field.proto
	default:
		return nil
	}
	if !style2024(fld) {
		return nil
	}
	if problem := checkSnakeCase(string(fld.Name()), false); problem != "" {
		return report(r.FieldNode(fdp).FieldName(), "field", string(fld.Name()), problem)
	}
	return nil
}

func (r *result) validateServiceNames(handler *reporter.Handler) error {
	if descriptorpb.Edition(r.Edition()) < descriptorpb.Edition_EDITION_2024 {
		return nil
	}
	file := r.FileNode()
	svcs := r.Services()
	for i := 0; i < svcs.Len(); i++ {
		sd, ok := svcs.Get(i).(*svcDescriptor)
		if !ok {
			continue
		}
		if style2024(sd) {
			if problem := checkTitleCase(string(sd.Name())); problem != "" {
				if err := handler.HandleErrorf(file.NodeInfo(nameNode(r.ServiceNode(sd.proto))), "service name %s %s%s%s", sd.Name(), problem, suggestName("service", string(sd.Name())), namingOptOut); err != nil {
					return err
				}
			}
		}
		for j := 0; j < sd.Methods().Len(); j++ {
			md, ok := sd.Methods().Get(j).(*mtdDescriptor)
			if !ok || !style2024(md) {
				continue
			}
			if problem := checkTitleCase(string(md.Name())); problem != "" {
				if err := handler.HandleErrorf(file.NodeInfo(nameNode(r.MethodNode(md.proto))), "method name %s %s%s%s", md.Name(), problem, suggestName("method", string(md.Name())), namingOptOut); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// nameNode is the name of a declaration, the node itself when it has no
// source.
func nameNode(n ast.Node) ast.Node {
	switch n := n.(type) {
	case *ast.OneofNode:
		return n.Name
	case *ast.EnumNode:
		return n.Name
	case *ast.ServiceNode:
		return n.Name
	case *ast.RPCNode:
		return n.Name
	}
	return n
}
