//go:build !unix

package grounding

import "time"

// processCPU is not measured here; benchmarks then report no CPU figure.
func processCPU() time.Duration { return 0 }
