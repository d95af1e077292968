package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"groundwork/grounding"
)

// A refusal shows the user the store's or the domain's own sentence, never
// the "store: OPERATION:" chain or the sentinel's name.
func TestUserMessage(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("store: enqueue decision 0 of trajectory 13: the note is longer than 4000 bytes: %w", grounding.ErrInvalid),
			"The note is longer than 4000 bytes."},
		{fmt.Errorf("store: import clash.jsonl: trajectory \"wt3\" (record 0) is already in run \"s\", imported from a.jsonl: %w", grounding.ErrConflict),
			"Trajectory \"wt3\" (record 0) is already in run \"s\", imported from a.jsonl."},
		{fmt.Errorf("prioritize: %w", fmt.Errorf("store: prioritize run 3: depth 0: %w", grounding.ErrInvalid)), "Depth 0."},
		{fmt.Errorf("a scale needs at least one size: %w", grounding.ErrInvalid), "A scale needs at least one size."},
		{grounding.ErrInvalid, "Invalid input."},
	} {
		if got := userMessage(c.err); got != c.want {
			t.Errorf("userMessage(%q) = %q, want %q", c.err, got, c.want)
		}
	}
	status, msg := classify(fmt.Errorf("store: set overlap of run 2: 0 verdicts per item: want 1 to 5: %w", grounding.ErrInvalid))
	if status != http.StatusUnprocessableEntity || msg != "0 verdicts per item: want 1 to 5." {
		t.Errorf("classify = %d %q", status, msg)
	}
	if _, msg := classify(errors.New("pq: relation \"users\" does not exist")); msg != "" {
		t.Errorf("an internal error classified with a message for the user: %q", msg)
	}
}
