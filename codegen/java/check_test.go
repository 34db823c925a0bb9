package java_test

import (
	"context"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/generate"
	"github.com/msgcontract/msgcontract/codegen/java"
	"github.com/msgcontract/msgcontract/codegen/model"
)

// checkFile is a .proto of the class-collision cases: package shop.v1,
// Java package com.example.shop unless options say otherwise, an event
// Placed when event is set, then body.
func checkFile(options string, event bool, body string) string {
	src := "syntax = \"proto3\";\n\npackage shop.v1;\n\nimport \"msgcontract/v1/options.proto\";\n\n"
	if !strings.Contains(options, "java_package") {
		options = "option java_package = \"com.example.shop\";\n" + options
	}
	src += options + "\n"
	if event {
		src += "message Placed {\n  option (msgcontract.v1.event) = { topic: \"t\" event_type: \"P\" biz_key: \"{id}\" };\n  string id = 1;\n}\n"
	}
	return src + body
}

// TestCheckClassCollisions: a contract class whose fully qualified name
// is another file's contract class, or a class protoc generates for
// another file (its outer class, by java_outer_classname or from its file
// name, or under java_multiple_files a message or enum class),
// is JAVA_CLASS_COLLISION, positioned at the file (1:1, as protoc's
// request carries no position of standard options) and naming both files;
// different packages, protoc's OuterClass suffix and a contract class
// renamed away from its own file's classes are no finding.
func TestCheckClassCollisions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		sources map[string]string
		files   []string // loaded; the other sources are only imported
		want    []string // "pos: message substrings joined by |", in order
	}{{
		name: "two contracts, one outer class",
		sources: map[string]string{
			"a/one.proto": checkFile("option java_package = \"com.example.shared\";\noption java_outer_classname = \"Shared\";\n", true, ""),
			"b/two.proto": strings.Replace(checkFile("option java_package = \"com.example.shared\";\noption java_outer_classname = \"Shared\";\n", true, ""), "Placed", "Shipped", 1),
		},
		files: []string{"a/one.proto", "b/two.proto"},
		want:  []string{"b/two.proto:1:1: contract class com.example.shared.SharedContract|also generated for a/one.proto|java_outer_classname"},
	}, {
		name: "outer class from the file name",
		sources: map[string]string{
			"shop/order.proto":          checkFile("", true, ""),
			"shop/order_contract.proto": checkFile("", false, "message Line { string sku = 1; }\n"),
		},
		files: []string{"shop/order.proto", "shop/order_contract.proto"},
		want:  []string{"shop/order.proto:1:1: contract class com.example.shop.OrderContract|outer class of shop/order_contract.proto|java_outer_classname"},
	}, {
		name: "outer class only imported",
		sources: map[string]string{
			"shop/order.proto":          checkFile("", true, "") + "import \"shop/order_contract.proto\";\n",
			"shop/order_contract.proto": checkFile("", false, ""),
		},
		files: []string{"shop/order.proto"},
		want:  []string{"shop/order.proto:1:1: com.example.shop.OrderContract|outer class of shop/order_contract.proto"},
	}, {
		name: "outer class by java_outer_classname",
		sources: map[string]string{
			"shop/order.proto":  checkFile("", true, ""),
			"shop/ledger.proto": checkFile("option java_outer_classname = \"OrderContract\";\n", false, ""),
		},
		files: []string{"shop/order.proto", "shop/ledger.proto"},
		want:  []string{"shop/order.proto:1:1: OrderContract|outer class of shop/ledger.proto"},
	}, {
		name: "own java_outer_classname",
		sources: map[string]string{
			"shop/ledger.proto":         checkFile("option java_outer_classname = \"Order\";\n", true, ""),
			"shop/order_contract.proto": checkFile("", false, ""),
		},
		files: []string{"shop/ledger.proto", "shop/order_contract.proto"},
		want:  []string{"shop/ledger.proto:1:1: OrderContract|outer class of shop/order_contract.proto"},
	}, {
		name: "message class under java_multiple_files",
		sources: map[string]string{
			"shop/order.proto": checkFile("", true, ""),
			"shop/types.proto": checkFile("option java_multiple_files = true;\n", false, "message OrderContract { string id = 1; }\n"),
		},
		files: []string{"shop/order.proto", "shop/types.proto"},
		want:  []string{"shop/order.proto:1:1: OrderContract|message shop.v1.OrderContract of shop/types.proto"},
	}, {
		name: "enum class under java_multiple_files",
		sources: map[string]string{
			"shop/order.proto": checkFile("", true, ""),
			"shop/types.proto": checkFile("option java_multiple_files = true;\n", false, "enum OrderContract { ORDER_CONTRACT_UNSPECIFIED = 0; }\n"),
		},
		files: []string{"shop/order.proto", "shop/types.proto"},
		want:  []string{"shop/order.proto:1:1: OrderContract|enum shop.v1.OrderContract of shop/types.proto"},
	}, {
		// protoc's outer class of order_contract.proto is
		// OrderContractOuterClass: it declares a message OrderContract,
		// nested in that class.
		name: "OuterClass suffix",
		sources: map[string]string{
			"shop/order.proto":          checkFile("", true, ""),
			"shop/order_contract.proto": checkFile("", false, "message OrderContract { string id = 1; }\n"),
		},
		files: []string{"shop/order.proto", "shop/order_contract.proto"},
	}, {
		name: "other Java package",
		sources: map[string]string{
			"shop/order.proto":          checkFile("", true, ""),
			"shop/order_contract.proto": checkFile("option java_package = \"com.example.other\";\n", false, ""),
		},
		files: []string{"shop/order.proto", "shop/order_contract.proto"},
	}, {
		name: "fixed by java_outer_classname",
		sources: map[string]string{
			"shop/order.proto":          checkFile("option java_outer_classname = \"OrderProto\";\n", true, ""),
			"shop/order_contract.proto": checkFile("", false, ""),
		},
		files: []string{"shop/order.proto", "shop/order_contract.proto"},
	}, {
		// The contract class steps aside from its own file's classes
		// (OrderContract_), so it meets nobody's.
		name: "own message class",
		sources: map[string]string{
			"shop/order.proto": checkFile("option java_multiple_files = true;\n", true, "message OrderContract { string id = 1; }\n"),
		},
		files: []string{"shop/order.proto"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			set, err := model.Load(context.Background(), model.Config{Sources: tc.sources}, tc.files...)
			if err != nil {
				t.Fatal(err)
			}
			var got []model.Diagnostic
			for _, d := range java.Check(set) {
				if d.Rule == "JAVA_CLASS_COLLISION" {
					got = append(got, d)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%d findings, want %d:\n%v", len(got), len(tc.want), model.Diagnostics(got))
			}
			for i, w := range tc.want {
				pos, parts, _ := strings.Cut(w, ": ")
				if got[i].Pos.String() != pos {
					t.Errorf("finding at %s, want %s: %s", got[i].Pos, pos, got[i].Message)
				}
				for _, p := range strings.Split(parts, "|") {
					if !strings.Contains(got[i].Message, p) {
						t.Errorf("finding %q lacks %q", got[i].Message, p)
					}
				}
			}
		})
	}
}

// TestGenerateRefusesOneFileTwice: two contract classes of one name in
// two Java packages are no collision for javac, but under
// paths=source_relative files of one folder share their output: the run
// is refused, naming both files, instead of writing one over the other.
func TestGenerateRefusesOneFileTwice(t *testing.T) {
	t.Parallel()
	sources := map[string]string{
		"shop/a.proto": checkFile("option java_package = \"com.example.a\";\noption java_outer_classname = \"Shop\";\n", true, ""),
		"shop/b.proto": strings.Replace(checkFile("option java_package = \"com.example.b\";\noption java_outer_classname = \"Shop\";\n", true, ""), "Placed", "Paid", 1),
	}
	set, err := model.Load(context.Background(), model.Config{Sources: sources}, "shop/a.proto", "shop/b.proto")
	if err != nil {
		t.Fatal(err)
	}
	generate.Lint(set)
	if len(set.Diagnostics) > 0 {
		t.Fatalf("lint: %v", set.Diagnostics)
	}
	if _, err := generate.Run(set, emit.Params{Lang: "java"}); err != nil {
		t.Fatalf("by package: %v", err)
	}
	_, err = generate.Run(set, emit.Params{Lang: "java", Paths: "source_relative"})
	const want = "shop/a.proto and shop/b.proto both generate shop/ShopContract.java, so one would be written over the other"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("source_relative: error %v, want %q", err, want)
	}
}
