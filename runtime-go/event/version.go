package event

// Version is runtime-go's version.
const Version = "0.2.0"

// IsAtLeastVersion0_1_0 is referenced by code generated for this runtime
// API, so that building it against an older runtime-go fails at compile
// time on this one line instead of deep inside a function. Later versions
// keep it and add IsAtLeastVersion constants of their own.
const IsAtLeastVersion0_1_0 = true

// IsAtLeastVersion0_2_0 is referenced by code generated for runtime API
// 0.2.0: state machines declared as data and decided by
// statemachine.CanTransit, which 0.1.0 lacks.
const IsAtLeastVersion0_2_0 = true
