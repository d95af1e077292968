package web

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"groundwork/grounding"
)

// importSWEData imports SWE-bench instance metadata (global, no run) or a
// run's evaluation results, told apart from trajectories by content. The
// result names the kind and count in Format ("swe-instances (78
// instances)"), with no trajectories; results need an existing run.
func (i Importer) importSWEData(ctx context.Context, runName string, br *bufio.Reader, file string, kind grounding.Format) (grounding.ImportResult, error) {
	res := grounding.ImportResult{File: file}
	switch kind {
	case grounding.FormatSWEInstances:
		n, err := i.DB.ImportSWEInstances(ctx, file, grounding.ReadSWEInstances(br, file))
		if err != nil {
			return res, err
		}
		res.Format = string(kind) + " (" + strconv.Itoa(n) + " instances)"
		return res, nil
	case grounding.FormatSWEResults:
		if runName == "" {
			return res, &grounding.ImportError{File: file, Record: -1, Expected: "the run these evaluation results belong to",
				Got: "no run name (give --run NAME, or fill in the run field)"}
		}
		n, err := i.DB.ImportSWEResults(ctx, runName, file, grounding.ReadSWEResults(br, file))
		if errors.Is(err, grounding.ErrNotFound) {
			return res, &grounding.ImportError{File: file, Record: -1, Expected: "the name of a run already imported (results belong to the run whose patches were evaluated)",
				Got: strconv.Quote(runName) + ", which does not exist"}
		}
		if err != nil {
			return res, err
		}
		res.RunName = runName
		if r, err := i.DB.RunByName(ctx, runName); err == nil {
			res.RunID = r.ID
		}
		res.Format = string(kind) + " (" + strconv.Itoa(n) + " results)"
		return res, nil
	}
	return res, fmt.Errorf("import: %s: unexpected SWE data kind %q", file, kind)
}

// refreshSWE computes the diagnostics of a run's new SWE trajectories right
// after their import, so the SWE pages open without waiting. A failure is
// only logged: the pages compute what is missing themselves.
func (i Importer) refreshSWE(ctx context.Context, runID int64) {
	if _, err := i.DB.RefreshSWEDiagnostics(ctx, runID); err != nil {
		slog.Default().Warn("SWE diagnostics after import", "run_id", runID, "err", err)
	}
}

// sweDataSummary describes an import of SWE metadata or results for the
// CLI; ok is false for a trajectory import.
func sweDataSummary(res grounding.ImportResult) (string, bool) {
	kind, count, ok := strings.Cut(res.Format, " (")
	if !ok {
		return "", false
	}
	count = strings.TrimSuffix(count, ")")
	switch grounding.Format(kind) {
	case grounding.FormatSWEInstances:
		return "imported " + count + " of SWE-bench metadata", true
	case grounding.FormatSWEResults:
		return fmt.Sprintf("imported %s of evaluation into run %q", count, res.RunName), true
	}
	return "", false
}
