package grounding

import (
	"math"
	"strconv"
	"testing"
)

// TestAppendNumberKeyIntegers checks the integer fast path of
// appendNumberKey against the general float formatting it stands in for:
// index keys must not depend on which path made them.
func TestAppendNumberKeyIntegers(t *testing.T) {
	vals := []float64{1, -1, 2, 7, 10, 250, -250, 1000, 4421486, 123456789012345, -123456789012345,
		1e15, -1e15, 1e15 + 1, 1e16, 2e20, -3e21, 0.5, 250.25, -0.001, math.MaxInt64, math.MinInt64}
	for i := int64(-2000); i <= 2000; i += 7 {
		vals = append(vals, float64(i), float64(i)*1e9)
	}
	for _, f := range vals {
		want := "n:" + strconv.FormatFloat(f, 'f', -1, 64)
		if got := numberKey(f); got != want {
			t.Errorf("numberKey(%v) = %q, want %q", f, got, want)
		}
	}
	if got := numberKey(math.Copysign(0, -1)); got != "n:0" {
		t.Errorf("numberKey(-0) = %q, want n:0", got)
	}
}
