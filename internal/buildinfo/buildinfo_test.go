package buildinfo

import "testing"

func TestModuleVersion(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"v0.3.0", "0.3.0"},
		{"v12.0.1", "12.0.1"},
		{"(devel)", "dev"},
		{"", "dev"},
		{"v0.0.0-20260101000000-0123456789ab", "dev"},
		{"v0.3.1-0.20260101000000-0123456789ab+dirty", "dev"},
	} {
		if got := moduleVersion(c.in, "dev"); got != c.want {
			t.Errorf("moduleVersion(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestLine(t *testing.T) {
	defer func(v, c string) { Version, Commit = v, c }(Version, Commit)
	Version, Commit = "0.3.0", ""
	if got, want := Line("msgcontract"), "msgcontract 0.3.0"; got != want {
		t.Errorf("Line without commit = %q, want %q", got, want)
	}
	Commit = "0123456789abcdef0123456789abcdef01234567"
	if got, want := Line("msgcontract-ops"), "msgcontract-ops 0.3.0 (commit 0123456789ab)"; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
}
