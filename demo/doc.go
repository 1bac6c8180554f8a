// Package demo provides what `approve-tui demo` runs on a fresh database:
// Seed writes a varied, deterministic set of proposals (every risk level,
// diffs and their absence, long and multi-line commands, hostile strings, a
// proposal about to expire and one already expired, a corrupt row, a row
// written the way Hermes writes it, and one pinned lower than the classifier
// says now), and RunAgent is a simulated agent that keeps submitting
// proposals, waits on them as a live waiter and records a fake execution
// outcome for those that get approved. It never runs anything.
//
// Everything is derived from a seed: with the same seed, Seed writes the
// same ids and payloads (times are relative to the given now), so scripts
// and documentation can refer to them; Catalogue lists them without writing.
package demo

import "github.com/approve-tui/approve-tui/model"

// Actor is who submits and records outcomes in the demo: the simulated agent.
func Actor() model.Actor {
	return model.Actor{Surface: model.SurfaceDemo, Name: "demo-agent"}
}
