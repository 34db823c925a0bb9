package compat

import (
	"fmt"
	"strings"
)

// Level is a compatibility level, named as Confluent Schema Registry names
// them.
type Level string

// The levels. BACKWARD is the registry's default; FULL is the offline
// checker's, because producers and consumers of a topic upgrade
// independently.
const (
	// None checks nothing.
	None Level = "NONE"
	// Backward: consumers on the new schema read data of the latest version.
	Backward Level = "BACKWARD"
	// Forward: consumers on the latest version read data of the new schema.
	Forward Level = "FORWARD"
	// Full: both Backward and Forward.
	Full Level = "FULL"
	// The _TRANSITIVE forms check against every earlier version, not only
	// the latest.
	BackwardTransitive Level = "BACKWARD_TRANSITIVE"
	ForwardTransitive  Level = "FORWARD_TRANSITIVE"
	FullTransitive     Level = "FULL_TRANSITIVE"
)

// Levels lists every level.
var Levels = []Level{None, Backward, Forward, Full, BackwardTransitive, ForwardTransitive, FullTransitive}

// ParseLevel reads a level name, ignoring case.
func ParseLevel(s string) (Level, error) {
	up := Level(strings.ToUpper(strings.TrimSpace(s)))
	for _, l := range Levels {
		if l == up {
			return l, nil
		}
	}
	names := make([]string, len(Levels))
	for i, l := range Levels {
		names[i] = string(l)
	}
	return "", fmt.Errorf("unknown compatibility level %q; use one of %s", s, strings.Join(names, ", "))
}

// Directions are the reader/writer pairings the level protects; zero for
// NONE.
func (l Level) Directions() Direction {
	switch l {
	case Backward, BackwardTransitive:
		return NewReadsOld
	case Forward, ForwardTransitive:
		return OldReadsNew
	case Full, FullTransitive:
		return BothWays
	}
	return 0
}

// Transitive reports whether the level checks every earlier version rather
// than only the latest.
func (l Level) Transitive() bool { return strings.HasSuffix(string(l), "_TRANSITIVE") }
