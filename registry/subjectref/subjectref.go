// Package subjectref holds the registry's rules for subject names and schema
// references, as Confluent's Schema Registry reads them: schema contexts
// (":.ctx:name"), references read in the referring schema's context, and
// the file name a subject's schema is compiled as.
//
// It is apart from registry/store so that the client, the schema compiler
// and `msgcontract breaking --against URL` use these rules without linking
// the store's database drivers.
package subjectref

import "strings"

// DefaultContext is the schema context of every subject not qualified
// with another, as in Confluent's registry.
const DefaultContext = "."

// Latest is the version number that selects a subject's newest live
// version (Confluent's "latest"), in references and lookups alike.
const Latest = -1

// Reference is a Confluent-style schema reference: the referenced subject's
// version is imported under Name.
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// Split returns a subject's schema context and its name within it:
// ":.ctx:name" is name in context ".ctx" (":.:name" is name in the default
// context); any other subject is itself, in the default context.
func Split(subject string) (ctx, name string) {
	if strings.HasPrefix(subject, ":.") {
		if i := strings.IndexByte(subject[1:], ':'); i >= 0 {
			return subject[1 : i+1], subject[i+2:]
		}
	}
	return DefaultContext, subject
}

// InContext returns refs, made by a schema of subject, with each
// reference's subject read in subject's context, as Confluent does: an
// unqualified reference subject of a schema in ".ctx" names the subject
// of that name in ".ctx"; a qualified one (":.other:x", or ":.:x" for the
// default context) names that. refs itself when nothing changes.
func InContext(subject string, refs []Reference) []Reference {
	parent, _ := Split(subject)
	var out []Reference
	for i, r := range refs {
		q := qualify(parent, r.Subject)
		if q == r.Subject {
			continue
		}
		if out == nil {
			out = append([]Reference(nil), refs...)
		}
		out[i].Subject = q
	}
	if out == nil {
		return refs
	}
	return out
}

// qualify is subject, written in a schema of context parent, as the
// subject it names.
func qualify(parent, subject string) string {
	if c, name := Split(subject); name != subject {
		if c == DefaultContext {
			return name
		}
		return subject
	}
	if parent == DefaultContext || subject == "" {
		return subject
	}
	return ":" + parent + ":" + subject
}

// FileName is the file name a subject's schema is compiled as, and so the
// file violations point into: the subject itself when it names a .proto
// file (as Confluent's reference subjects do), else subject + ".proto";
// of a qualified subject (":.ctx:name"), the name alone.
func FileName(subject string) string {
	// A qualified subject's context is not part of the file's name.
	_, subject = Split(subject)
	if strings.HasSuffix(subject, ".proto") {
		return subject
	}
	return subject + ".proto"
}
