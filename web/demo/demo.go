// Package demo embeds the small pool groundwork loads on its first start so a
// new user has something to look at.
package demo

import _ "embed"

// JSONL is a handful of airline and retail trajectories in the canonical
// format: a grounded change, a hidden teacher hint that leaks, an error and
// its recovery, a failed hand-off, and a return with a calculation.
//
//go:embed demo.jsonl
var JSONL []byte

// FileName is how the demo file is named in the import record.
const FileName = "demo.jsonl"

// RunName is the run the demo pool is imported into.
const RunName = "demo"
