package emit

import "fmt"

// Outputs makes sure one run writes each file for one input only: two
// inputs generating one name would be written over each other, and one
// contract lost (protoc refuses such a plugin response: "Tried to write
// the same file twice"). Every language's generator claims its names here
// before it hands over a file, so `msgcontract generate` and the plugin
// refuse alike, with one message. The zero value is ready to use; it is
// not safe for concurrent use.
type Outputs struct{ by map[string]string }

// Claim records that the .proto file source generates name, or returns
// the error naming both inputs when another already does; fix says how
// to tell them apart.
func (o *Outputs) Claim(name, source, fix string) error {
	if o.by == nil {
		o.by = map[string]string{}
	}
	if other, ok := o.by[name]; ok && other != source {
		return fmt.Errorf("%s and %s both generate %s, so one would be written over the other; %s", other, source, name, fix)
	}
	o.by[name] = source
	return nil
}
