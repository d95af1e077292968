//go:build unix

package grounding

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the test process has used so far, user and
// system, on every thread (the garbage collector's included).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
