// Package classify decides whether a handler failure is retried, by
// DESIGN.md's rules: a decode failure is never retryable; an error with a
// code is classified by the range holding it; anything else follows the
// contract's "unclassified" setting.
package classify

// Range is an inclusive range of error codes.
type Range struct {
	From, To  int32
	Retryable bool
	Name      string
}

// Rules are a contract's error ranges and its unclassified setting.
type Rules struct {
	Ranges []Range
	// UnclassifiedRetryable is how codes outside every range, and errors
	// with no code, are treated.
	UnclassifiedRetryable bool
}

// Classification is a classification. Range is the holding range's name, empty when
// the code fell outside every range or there was no code.
type Classification struct {
	Retryable bool
	Range     string
}

// Code classifies an error carrying code.
func (r Rules) Code(code int32) Classification {
	for _, rg := range r.Ranges {
		if rg.From <= code && code <= rg.To {
			return Classification{Retryable: rg.Retryable, Range: rg.Name}
		}
	}
	return Classification{Retryable: r.UnclassifiedRetryable}
}

// NoCode classifies an error that carries no code.
func (r Rules) NoCode() Classification { return Classification{Retryable: r.UnclassifiedRetryable} }
