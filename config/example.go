package config

import _ "embed"

// Example is a commented example file: every key, all five channel types,
// two routes ("approve-tui config example" prints it). It loads as it is
// once its environment variables are set.
//
//go:embed example.yaml
var Example string
