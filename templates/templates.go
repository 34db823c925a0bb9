// Package templates holds the text/template sources of the Java and Python
// emitters, embedded into the msgcontract binary. codegen/java and
// codegen/python render them from the contract model; nothing else reads
// them.
package templates

import "embed"

// FS holds java/*.tmpl, java/support/*.tmpl and python/*.tmpl.
//
//go:embed java python
var FS embed.FS
