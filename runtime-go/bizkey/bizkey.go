// Package bizkey renders business keys by DESIGN.md's cross-language rules.
// Generated producers call a Builder in template order; the msgcontract CLI
// uses the same Builder for keys computed from JSON payloads, so there is one
// Go implementation of the rules.
package bizkey

import (
	"errors"
	"fmt"
	"strconv"
)

// MaxLen is the longest key allowed, in bytes after encoding.
const MaxLen = 512

// Code is the closed set of key-rendering failures.
type Code string

const (
	// EmptyField: a placeholder's value is an empty string, an unset
	// sub-message on a dotted path, or an absent optional field.
	EmptyField Code = "EMPTY_FIELD"
	// KeyTooLong: the rendered key exceeds MaxLen bytes.
	KeyTooLong Code = "KEY_TOO_LONG"
)

// Error is a key-rendering failure. Match with errors.As and compare Code.
type Error struct {
	Code Code
	// Field is the placeholder path for EmptyField; Len the key length for
	// KeyTooLong.
	Field string
	Len   int
}

func (e *Error) Error() string {
	switch e.Code {
	case EmptyField:
		return fmt.Sprintf("%s: biz_key field %q is empty or unset; the producer must set it", e.Code, e.Field)
	case KeyTooLong:
		return fmt.Sprintf("%s: biz_key is %d bytes after encoding, over the %d-byte limit", e.Code, e.Len, MaxLen)
	}
	return string(e.Code)
}

// Is reports whether target is an *Error with the same Code, so that
// errors.Is(err, &bizkey.Error{Code: bizkey.EmptyField}) works.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code
}

// Escape percent-encodes s as UTF-8 bytes outside A-Z a-z 0-9 - . _ ~,
// with upper-case hex.
func Escape(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !unreserved(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hex[c>>4], hex[c&15])
	}
	return string(b)
}

func unreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// Builder accumulates a key. The first failure sticks; Key reports it.
type Builder struct {
	buf []byte
	err error
}

// Literal appends template text as written.
func (b *Builder) Literal(s string) { b.buf = append(b.buf, s...) }

// String appends a string field's value, percent-encoded. An empty value is
// an EmptyField error naming field.
func (b *Builder) String(field, v string) {
	if v == "" {
		b.Fail(field)
		return
	}
	b.buf = append(b.buf, Escape(v)...)
}

// Int appends a signed integer in base 10.
func (b *Builder) Int(v int64) { b.buf = strconv.AppendInt(b.buf, v, 10) }

// Uint appends an unsigned integer in base 10.
func (b *Builder) Uint(v uint64) { b.buf = strconv.AppendUint(b.buf, v, 10) }

// Bool appends true or false.
func (b *Builder) Bool(v bool) { b.buf = strconv.AppendBool(b.buf, v) }

// Enum appends an enum value's name; name is never percent-encoded (proto
// identifiers hold only unreserved characters).
func (b *Builder) Enum(name string) { b.buf = append(b.buf, name...) }

// Fail records an EmptyField error for field unless an error is recorded
// already: an unset sub-message or absent optional field.
func (b *Builder) Fail(field string) {
	if b.err == nil {
		b.err = &Error{Code: EmptyField, Field: field}
	}
}

// Key returns the rendered key or the first error.
func (b *Builder) Key() (string, error) {
	if b.err != nil {
		return "", b.err
	}
	if len(b.buf) > MaxLen {
		return "", &Error{Code: KeyTooLong, Len: len(b.buf)}
	}
	return string(b.buf), nil
}
