package web

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"groundwork/grounding"
)

// runGen implements `groundwork gen`: a deterministic pool in the canonical
// format on stdout, for benchmarks, tests and demos.
func runGen(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	n := fs.Int("trajectories", 1000, "how many trajectories")
	seed := fs.Uint64("seed", 1, "random seed: the same seed gives the same pool")
	kind := fs.String("kind", "tau", "tau, swe or mixed")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if *n < 0 {
		return fmt.Errorf("gen: --trajectories must be at least 0, got %d", *n)
	}
	if !slices.Contains(grounding.GenKinds, *kind) {
		return fmt.Errorf("gen: --kind %q: expected one of %s", *kind, strings.Join(grounding.GenKinds, ", "))
	}
	w := bufio.NewWriterSize(stdout, 1<<20)
	if err := grounding.WriteGenerated(w, grounding.GenOptions{Trajectories: *n, Seed: *seed, Kind: *kind}); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	return w.Flush()
}
