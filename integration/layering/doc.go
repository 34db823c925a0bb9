// Package layering holds only a test: it checks that no package of the
// tool module imports a package of a higher layer. The layers, lowest
// first:
//
//  1. contracts/... and the runtime-go module: what generated code and
//     services link; the module's root package, which holds the family's
//     VERSION;
//  2. codegen/...: the contract model and the generators;
//  3. registry/...: the schema registry, built on the model;
//  4. conformance/... and internal/...: the CLI, the harnesses, the tools;
//  5. cmd/..., examples/..., bench/...: programs, which nothing imports;
//     integration/...: tests across parts and processes (real brokers,
//     databases, the JVM and Python), which nothing imports;
//     ops/: the operations files and their test.
//
// A package may import its own layer and lower ones, never internal/...
// from codegen or registry (registry/internal is registry's own).
package layering
