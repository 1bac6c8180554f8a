// Package model holds approve-tui's domain types: the proposal (the row an
// agent writes into the Hermes-compatible gateway_approvals table), its
// lifecycle states, validation, the payload codec that reads and writes the
// JSON Python's json.dumps(dataclasses.asdict(proposal)) produces, the actor
// who decides, and the one sanitiser through which every agent-supplied
// string passes before it reaches a terminal.
//
// It has no SQL and no terminal styling: storage/, risk/, tui/ and the CLI
// all build on it.
package model
