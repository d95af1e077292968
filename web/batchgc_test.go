package web

import (
	"runtime/debug"
	"testing"
)

// gcPercent reads GOGC (SetGCPercent returns the previous value).
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestBatchGCRaisesGOGCAndRestoresIt(t *testing.T) {
	before := gcPercent()
	restore := batchGC(func(string) string { return "" })
	if got := gcPercent(); got != batchGCPercent {
		t.Errorf("GOGC during a batch command = %d, want %d", got, batchGCPercent)
	}
	restore()
	if got := gcPercent(); got != before {
		t.Errorf("GOGC after the command = %d, want %d again", got, before)
	}
	restore = batchGC(func(k string) string {
		if k == "GOGC" {
			return "50"
		}
		return ""
	})
	if got := gcPercent(); got != before {
		t.Errorf("with $GOGC set, GOGC = %d; the environment's setting must stand (%d)", got, before)
	}
	restore()
}
