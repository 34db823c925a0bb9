package classify

import (
	"errors"
	"fmt"
)

// CodedError is a handler failure carrying a contract error code. Handlers
// return it (directly or wrapped) so the runtime can classify the failure by
// the contract's error ranges.
type CodedError struct {
	Code    int32
	Message string
	// Cause is an optional underlying error, reachable with errors.Unwrap.
	Cause error
}

// NewError returns a coded error.
func NewError(code int32, msg string) *CodedError {
	return &CodedError{Code: code, Message: msg}
}

// Errorf returns a coded error with a formatted message; a %w verb wraps.
func Errorf(code int32, format string, args ...any) *CodedError {
	err := fmt.Errorf(format, args...)
	return &CodedError{Code: code, Message: err.Error(), Cause: errors.Unwrap(err)}
}

func (e *CodedError) Error() string { return fmt.Sprintf("code %d: %s", e.Code, e.Message) }

func (e *CodedError) Unwrap() error { return e.Cause }

// CodeOf returns the code of the first CodedError in err's chain.
func CodeOf(err error) (int32, bool) {
	var ce *CodedError
	if errors.As(err, &ce) {
		return ce.Code, true
	}
	return 0, false
}

// Err classifies a handler error: by its code when it carries one, by the
// unclassified setting otherwise.
func (r Rules) Err(err error) Classification {
	if code, ok := CodeOf(err); ok {
		return r.Code(code)
	}
	return r.NoCode()
}
