package lru

import "testing"

// TestEvictsLeastRecentlyUsed keeps two values: reading one makes the
// other the one to go, and a value once kept is not replaced.
func TestEvictsLeastRecentlyUsed(t *testing.T) {
	c := New[string, int](2)
	c.Put("a", 1)
	c.Put("b", 2)
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Fatalf("a = %d, %v", v, ok)
	}
	c.Put("c", 3) // b is the least recently used
	if _, ok := c.Get("b"); ok {
		t.Fatal("b should have been evicted")
	}
	c.Put("a", 10)
	if v, _ := c.Get("a"); v != 1 {
		t.Fatalf("a was replaced: %d", v)
	}
	if v, ok := c.Get("c"); !ok || v != 3 || c.Len() != 2 {
		t.Fatalf("c = %d, %v; len %d", v, ok, c.Len())
	}
}
