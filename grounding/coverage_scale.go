package grounding

import (
	"fmt"
	"strings"
	"unicode"
)

// Scale is a student model scale and its target depth d_s: how many
// certified trajectories each canonical path should have for a model of
// that size (SPEC §4). Projects configure their own; DefaultScales are the
// paper's.
type Scale struct {
	Name  string `json:"name"`
	Depth int    `json:"depth"`
}

// DefaultScales are SPEC §4's scales, smallest first: 1.7B → 1, 4B → 2,
// 8B → 3, 14B → 4, 30B-A3B → 8.
func DefaultScales() []Scale {
	return []Scale{{"1.7B", 1}, {"4B", 2}, {"8B", 3}, {"14B", 4}, {"30B-A3B", 8}}
}

// Scale name and depth limits.
const (
	MaxScaleName  = 32
	MaxScaleDepth = 1000
)

// Validate reports what is wrong with s as an error wrapping ErrInvalid, or
// nil: a name of 1 to 32 letters, digits, '.', '-' or '_', and a depth from
// 1 to 1000.
func (s Scale) Validate() error {
	name := strings.TrimSpace(s.Name)
	switch {
	case name == "":
		return fmt.Errorf("a scale needs a name (like 8B): %w", ErrInvalid)
	case len(name) > MaxScaleName:
		return fmt.Errorf("scale name %q is longer than %d characters: %w", name, MaxScaleName, ErrInvalid)
	case s.Depth < 1 || s.Depth > MaxScaleDepth:
		return fmt.Errorf("target depth of scale %q must be between 1 and %d, not %d: %w", name, MaxScaleDepth, s.Depth, ErrInvalid)
	}
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(".-_", r) {
			return fmt.Errorf("scale name %q may hold only letters, digits, '.', '-' and '_': %w", name, ErrInvalid)
		}
	}
	return nil
}

// FindScale returns the scale called name among scales (case-insensitive).
// An unknown name is an error wrapping ErrInvalid that lists the known ones.
func FindScale(scales []Scale, name string) (Scale, error) {
	name = strings.TrimSpace(name)
	for _, s := range scales {
		if strings.EqualFold(s.Name, name) {
			return s, nil
		}
	}
	names := make([]string, len(scales))
	for i, s := range scales {
		names[i] = s.Name
	}
	if len(names) == 0 {
		return Scale{}, fmt.Errorf("unknown scale %q: no scales are configured: %w", name, ErrInvalid)
	}
	return Scale{}, fmt.Errorf("unknown scale %q: the configured scales are %s: %w", name, strings.Join(names, ", "), ErrInvalid)
}
