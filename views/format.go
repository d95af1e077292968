package views

import (
	"strconv"
	"strings"
)

func itoa(n int) string { return strconv.Itoa(n) }

// stagesText joins the structured selection's stages with spaced middle
// dots: "breadth 4 · atoms 1 · paths 1,155".
func stagesText(stages []Figure) string {
	parts := make([]string, len(stages))
	for i, st := range stages {
		parts[i] = st.Label + " " + st.Value
	}
	return strings.Join(parts, " · ")
}
