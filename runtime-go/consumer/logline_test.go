package consumer

import (
	"strings"
	"testing"
)

func TestLogLine(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 100) // 200 bytes
	tests := []struct{ in, want string }{
		{"code 40901: illegal transition", "code 40901: illegal transition"},
		{"proto: cannot parse\n00000000  0a 02 6d 31", "proto: cannot parse…"},
		{long, strings.Repeat("é", 80) + "…"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := logLine(tt.in); got != tt.want {
			t.Errorf("logLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
