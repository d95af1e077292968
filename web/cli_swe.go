package web

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"groundwork/grounding"
)

// fileList is a repeatable file flag.
type fileList []string

func (f *fileList) String() string     { return strings.Join(*f, ",") }
func (f *fileList) Set(s string) error { *f = append(*f, s); return nil }

// sweTrajectoryJSON is one line of `groundwork swe --json`.
type sweTrajectoryJSON struct {
	Trajectory   string   `json:"trajectory"`
	InstanceID   string   `json:"instance_id"`
	Steps        int      `json:"steps"`
	Stages       []string `json:"stages"`
	Localization *float64 `json:"localization"`
	Reproduction *bool    `json:"reproduction"`
	Verification *bool    `json:"verification"`
	Completed    bool     `json:"completed"`
	letters      string   // the stages as L/R/P, lower case for fall-backs
}

// sweSummaryJSON is the final line of `groundwork swe --json`: the means
// over the trajectories given, each with the number of trajectories it is
// over (null when there is nothing to average), and how many distinct
// instances they attempted.
type sweSummaryJSON struct {
	Trajectories     int                `json:"trajectories"`
	Instances        int                `json:"instances"`
	StepsMean        *float64           `json:"steps_mean"`
	LocalizationMean *float64           `json:"localization_mean"`
	LocalizationN    int                `json:"localization_n"`
	ReproductionRate *float64           `json:"reproduction_rate"`
	ReproductionN    int                `json:"reproduction_n"`
	VerificationRate *float64           `json:"verification_rate"`
	VerificationN    int                `json:"verification_n"`
	CompletionRate   *float64           `json:"completion_rate"`
	CompletionN      int                `json:"completion_n"`
	ResolvedRate     *float64           `json:"resolved_rate"`
	ResolvedN        int                `json:"resolved_n"`
	StageShare       map[string]float64 `json:"stage_share"`
	Steps            int                `json:"steps"`
}

// runSWE diagnoses SWE trajectories from files, without a database:
//
//	groundwork swe [--instances FILE]... [--results FILE]... [--json] FILE...
//
// FILEs are trajectory logs in any format Detect knows; instance metadata
// and evaluation results given as FILEs are recognised and used as if
// passed with --instances / --results. A file that cannot be read is
// reported on stderr and the command fails after the others.
func runSWE(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("swe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var instFiles, resultFiles fileList
	fs.Var(&instFiles, "instances", "SWE-bench instance metadata (JSON or JSONL); repeatable")
	fs.Var(&resultFiles, "results", "SWE-bench evaluation results (report.json, …); repeatable")
	asJSON := fs.Bool("json", false, "print one JSON object per trajectory and a final summary")
	files, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return errors.New("swe: name at least one trajectory FILE")
	}

	instances := map[string]*grounding.SWEInstance{}
	resolved := map[string]bool{}
	failed := 0
	refuse := func(file string, err error) {
		failed++
		fmt.Fprintf(stderr, "%s: refused: %v\n", file, err)
	}
	for _, f := range instFiles {
		if err := readSWEInstances(f, instances); err != nil {
			return fmt.Errorf("swe: instances: %w", err)
		}
	}
	for _, f := range resultFiles {
		if err := readSWEResults(f, resolved); err != nil {
			return fmt.Errorf("swe: results: %w", err)
		}
	}
	var trajFiles []string
	for _, f := range files {
		kind, err := sweFileKind(f)
		switch {
		case err != nil:
			refuse(f, err)
		case kind == grounding.FormatSWEInstances:
			if err := readSWEInstances(f, instances); err != nil {
				refuse(f, err)
			}
		case kind == grounding.FormatSWEResults:
			if err := readSWEResults(f, resolved); err != nil {
				refuse(f, err)
			}
		default:
			trajFiles = append(trajFiles, f)
		}
	}

	var outcomes []grounding.SWEOutcome
	var rows []sweTrajectoryJSON
	for _, f := range trajFiles {
		if err := ctx.Err(); err != nil {
			return err
		}
		ds, err := diagnoseFile(f, instances)
		if err != nil {
			refuse(f, err)
			continue
		}
		for _, d := range ds {
			o := d.Outcome()
			if r, ok := resolved[o.InstanceID]; ok {
				o.Resolved = &r
			}
			outcomes = append(outcomes, o)
			rows = append(rows, sweTrajectoryJSON{
				Trajectory: d.Trajectory, InstanceID: d.InstanceID, Steps: len(d.Steps), Stages: d.Stages(),
				Localization: d.Localization, Reproduction: d.Reproduction, Verification: d.Verification, Completed: d.Completed,
				letters: d.StageString(),
			})
		}
	}
	// The command's summary is over the trajectories it was given (they may
	// mix runs of one instance), not collapsed per instance as the pages'
	// run comparison is.
	perTrajectory := make([]grounding.SWEOutcome, len(outcomes))
	attempted := map[string]bool{}
	for i, o := range outcomes {
		o.InstanceID, o.ExtID = "", strconv.Itoa(i)
		perTrajectory[i] = o
		if outcomes[i].InstanceID != "" {
			attempted[outcomes[i].InstanceID] = true
		}
	}
	sum := grounding.SummarizeSWE(perTrajectory)
	sum.Instances = len(attempted)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		if err := enc.Encode(map[string]sweSummaryJSON{"summary": summaryJSON(sum)}); err != nil {
			return err
		}
	} else if err := printSWETable(stdout, rows, sum); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("swe: %d of %d files refused", failed, len(files)+len(instFiles)+len(resultFiles))
	}
	return nil
}

// sweFileKind says whether a file holds instance metadata, evaluation
// results or (anything else) trajectories.
func sweFileKind(file string) (grounding.Format, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	kind, ok := grounding.DetectSWEData(bufio.NewReaderSize(f, 1<<20))
	if !ok {
		return grounding.FormatAuto, nil
	}
	return kind, nil
}

func readSWEInstances(file string, into map[string]*grounding.SWEInstance) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	for in, err := range grounding.ReadSWEInstances(f, file) {
		if err != nil {
			return err
		}
		into[in.InstanceID] = in
	}
	return nil
}

func readSWEResults(file string, into map[string]bool) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	for r, err := range grounding.ReadSWEResults(f, file) {
		if err != nil {
			return err
		}
		into[r.InstanceID] = r.Resolved
	}
	return nil
}

// diagnoseFile reads every trajectory of a log file and diagnoses it
// against its instance's metadata, when known.
func diagnoseFile(file string, instances map[string]*grounding.SWEInstance) ([]grounding.SWEDiagnosis, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []grounding.SWEDiagnosis
	for t, err := range grounding.Read(f, file, grounding.FormatAuto) {
		if err != nil {
			return nil, err
		}
		out = append(out, grounding.DiagnoseSWE(t, instances[grounding.SWEMetaOf(t).InstanceID]))
	}
	return out, nil
}

func summaryJSON(s grounding.SWESummary) sweSummaryJSON {
	mean := func(m grounding.SWEMetric) (*float64, int) {
		v := s.Mean(m)
		if v.N == 0 {
			return nil, 0
		}
		x := v.Value
		return &x, v.N
	}
	out := sweSummaryJSON{Trajectories: s.Trajectories, Instances: s.Instances, Steps: s.StepsTotal,
		StageShare: map[string]float64{"LOC": s.Share[0], "REP": s.Share[1], "PATCH": s.Share[2]}}
	out.StepsMean, _ = mean(grounding.SWEStepsMetric)
	out.LocalizationMean, out.LocalizationN = mean(grounding.SWELocalizationMetric)
	out.ReproductionRate, out.ReproductionN = mean(grounding.SWEReproductionMetric)
	out.VerificationRate, out.VerificationN = mean(grounding.SWEVerificationMetric)
	out.CompletionRate, out.CompletionN = mean(grounding.SWECompletionMetric)
	out.ResolvedRate, out.ResolvedN = mean(grounding.SWEResolvedMetric)
	return out
}

// printSWETable prints the human-readable report: one row per trajectory
// with its stage timeline, then the run-level means.
func printSWETable(w io.Writer, rows []sweTrajectoryJSON, s grounding.SWESummary) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "trajectory\tinstance\tsteps\tlocalization\treproduction\tverification\tcompleted\tstages (L LOC, R REP, P PATCH; lower case: fall-back)")
	for _, r := range rows {
		loc := "no reference"
		if r.Localization != nil {
			loc = fmt.Sprintf("%.2f", *r.Localization)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.Trajectory, orDash(r.InstanceID), r.Steps, loc,
			yesNoNil(r.Reproduction), yesNoNil(r.Verification), yesNoNil(&r.Completed), r.letters)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	line := func(name string, m grounding.SWEMetric, unit string) {
		v := s.Mean(m)
		if v.N == 0 {
			fmt.Fprintf(w, "  %-13s —  (no %s)\n", name, unit)
			return
		}
		fmt.Fprintf(w, "  %-13s %.3f  over %s\n", name, v.Value, plural(v.N, "trajectory"))
	}
	fmt.Fprintf(w, "\nsummary: %d trajectories, %d instances, %d steps (LOC %.0f%% · REP %.0f%% · PATCH %.0f%%)\n",
		s.Trajectories, s.Instances, s.StepsTotal, 100*s.Share[0], 100*s.Share[1], 100*s.Share[2])
	line("localization", grounding.SWELocalizationMetric, "reference metadata")
	line("reproduction", grounding.SWEReproductionMetric, "steps")
	line("verification", grounding.SWEVerificationMetric, "source edits")
	line("completion", grounding.SWECompletionMetric, "trajectories")
	line("steps", grounding.SWEStepsMetric, "trajectories")
	line("resolved", grounding.SWEResolvedMetric, "evaluation results")
	return nil
}

func plural(n int, what string) string {
	switch {
	case n == 1:
		return "1 " + what
	case strings.HasSuffix(what, "y"):
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(what, "y"))
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func yesNoNil(b *bool) string {
	switch {
	case b == nil:
		return "—"
	case *b:
		return "yes"
	}
	return "no"
}
