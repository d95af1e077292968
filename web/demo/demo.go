// Package demo embeds the small pool groundwork loads on its first start so a
// new user has something to look at.
package demo

import (
	"bytes"
	_ "embed"

	"groundwork/grounding"
)

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

// The generated pool: GeneratedTrajectories τ-bench-like trajectories of
// `groundwork gen --kind tau --seed GeneratedSeed`, so that a new user finds
// coverage heatmaps, deficits and a review queue with something in them.
const (
	GeneratedRun          = "demo-generated"
	GeneratedFile         = "demo-generated.jsonl"
	GeneratedSeed         = 7
	GeneratedTrajectories = 400
)

// Generated returns the generated pool as canonical JSON Lines.
func Generated() []byte {
	var b bytes.Buffer
	if err := grounding.WriteGenerated(&b, grounding.GenOptions{Trajectories: GeneratedTrajectories, Seed: GeneratedSeed, Kind: "tau"}); err != nil {
		panic(err) // a generated trajectory always encodes, and a Buffer takes it
	}
	return b.Bytes()
}

// SWEInstances is how many instances the SWE demo runs are on.
var SWEInstances = len(sweCatalog)
