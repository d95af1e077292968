package store

import (
	"slices"
	"strings"
	"testing"
)

func TestNaturalKey(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"task", "task"},
		{"task2", "task" + strings.Repeat("0", 19) + "2"},
		{"7", strings.Repeat("0", 19) + "7"},
		{"a1b22", "a" + strings.Repeat("0", 19) + "1b" + strings.Repeat("0", 18) + "22"},
		{"é12", "é" + strings.Repeat("0", 18) + "12"},
		{"x" + strings.Repeat("9", 25), "x" + strings.Repeat("9", 25)}, // 20 digits or more: as written
	} {
		if got := naturalKey(tt.in); got != tt.want {
			t.Errorf("naturalKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// The order a researcher expects of τ-bench ids.
	ids := []string{"task10-trial0", "task2-trial1", "task1-trial0", "task2-trial0", "task1-trial10", "task1-trial2", "task", "task-x", "task007-trial0"}
	slices.SortFunc(ids, func(a, b string) int {
		return strings.Compare(naturalKey(a)+"\x00"+a, naturalKey(b)+"\x00"+b)
	})
	want := []string{"task", "task-x", "task1-trial0", "task1-trial2", "task1-trial10", "task2-trial0", "task2-trial1", "task007-trial0", "task10-trial0"}
	if !slices.Equal(ids, want) {
		t.Errorf("natural order = %v, want %v", ids, want)
	}
}
