package buildinfo

import "testing"

func TestIsRelease(t *testing.T) {
	for v, want := range map[string]bool{
		"v0.3.0": true, "v10.20.30": true,
		"(devel)": false, "": false, "0.3.0": false, "v0.3": false, "v0.3.0-rc.1": false,
		"v0.3.1-0.20261205094500-abcdef123456": false, "v0.3.0+dirty": false, "v0..0": false,
	} {
		if got := isRelease(v); got != want {
			t.Errorf("isRelease(%q) = %v, want %v", v, got, want)
		}
	}
}
