package grounding

import (
	"fmt"
	"strings"
)

// ModelScale is a student model size and its target depth d_s: how many
// certified trajectories a canonical path should have at that scale (SPEC §4).
type ModelScale struct {
	Name  string
	Depth int
}

// modelScales are SPEC §4's default scales, smallest first.
var modelScales = []ModelScale{
	{"1.7B", 1},
	{"4B", 2},
	{"8B", 3},
	{"14B", 4},
	{"30B-A3B", 8},
}

// ModelScales returns the known model scales, smallest first.
func ModelScales() []ModelScale {
	return append([]ModelScale(nil), modelScales...)
}

// ModelScaleNames lists the known scale names for messages: "1.7B, 4B, …".
func ModelScaleNames() string {
	names := make([]string, len(modelScales))
	for i, s := range modelScales {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

// ParseModelScale returns the scale named s, ignoring case ("8b" is 8B). An
// unknown name is an error wrapping ErrInvalid whose text lists the known
// scales.
func ParseModelScale(s string) (ModelScale, error) {
	for _, m := range modelScales {
		if strings.EqualFold(strings.TrimSpace(s), m.Name) {
			return m, nil
		}
	}
	return ModelScale{}, fmt.Errorf("unknown model scale %q: expected one of %s: %w", s, ModelScaleNames(), ErrInvalid)
}
