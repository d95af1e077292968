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

const checkUsage = `usage: groundwork check [--profile NAME|FILE] [--json] FILE...

Runs the grounding checks on log files, without a database. Each trajectory
is checked under --profile (a shipped profile: airline, retail, swe, generic;
or a profile file), else under the profile its domain selects.
`

// checkLine is one decision in `groundwork check --json` (issue 3 item 8).
type checkLine struct {
	Trajectory  string      `json:"trajectory"`
	SourceIndex int         `json:"source_index"`
	Message     int         `json:"message"`
	Call        *int        `json:"call"`
	Tool        *string     `json:"tool"`
	Verdict     string      `json:"verdict"`
	Mask        int         `json:"mask"`
	Reasons     []string    `json:"reasons"`
	Args        []checkArgs `json:"args"`
}

type checkArgs struct {
	Path     string          `json:"path"`
	Value    json.RawMessage `json:"value"`
	Status   string          `json:"status"`
	Evidence string          `json:"evidence"`
	// Record is the record a policy finding cites, absent on every other
	// argument.
	Record *grounding.RecordRef `json:"record,omitempty"`
}

// checkSummary is the final `{"summary": …}` object: the pool audit plus
// what was read.
type checkSummary struct {
	Files       int      `json:"files"`
	FailedFiles []string `json:"failed_files"`
	*grounding.Audit
}

// runCheck implements `groundwork check`. It returns an error when a file
// cannot be read or is refused by the importers (after checking the others),
// or when ctx ends.
func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, checkUsage); fs.PrintDefaults() }
	profileFlag := fs.String("profile", "", "profile: airline, retail, swe, generic, or a profile file (default: by each trajectory's domain)")
	asJSON := fs.Bool("json", false, "print one JSON object per decision, then a {\"summary\": …} object")
	files, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		fs.Usage()
		return errors.New("check: name at least one FILE")
	}
	var profile *grounding.Profile
	if *profileFlag != "" {
		if profile, err = grounding.LoadProfile(*profileFlag); err != nil {
			return fmt.Errorf("check: %w", err)
		}
	}

	out := bufio.NewWriterSize(stdout, 64<<10)
	defer out.Flush()
	var table *tabwriter.Writer
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	if !*asJSON {
		table = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(table, "TRAJECTORY\tMSG\tCALL\tTOOL\tVERDICT\tMASK\tREASONS")
	}
	audit := grounding.NewAudit()
	summary := checkSummary{Files: len(files), FailedFiles: []string{}, Audit: audit}
	for _, file := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := checkFile(ctx, file, profile, audit, enc, table); err != nil {
			summary.FailedFiles = append(summary.FailedFiles, file)
			var ie *grounding.ImportError
			if errors.As(err, &ie) && ie.File != "" { // it names the file already
				fmt.Fprintln(stderr, err)
			} else {
				fmt.Fprintf(stderr, "%s: %v\n", file, err)
			}
		}
	}
	if *asJSON {
		if err := enc.Encode(map[string]checkSummary{"summary": summary}); err != nil {
			return err
		}
	} else {
		table.Flush()
		printSummary(out, summary)
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if n := len(summary.FailedFiles); n > 0 {
		return fmt.Errorf("check: %d of %d files could not be read", n, len(files))
	}
	return nil
}

// checkFile checks every trajectory of one file. Trajectories before a
// refused record are still reported.
func checkFile(ctx context.Context, file string, profile *grounding.Profile, audit *grounding.Audit, enc *json.Encoder, table *tabwriter.Writer) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	for t, err := range grounding.Read(f, file, grounding.FormatAuto) {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		r := grounding.Check(t, profile)
		audit.Add(r)
		for _, d := range r.Decisions {
			if table != nil {
				printDecision(table, r, d)
				continue
			}
			if err := enc.Encode(lineFor(r, d)); err != nil {
				return err
			}
		}
	}
	return nil
}

func lineFor(r grounding.Result, d grounding.DecisionResult) checkLine {
	l := checkLine{Trajectory: r.Trajectory, SourceIndex: r.SourceIndex, Message: d.Message, Verdict: string(d.Verdict),
		Mask: d.Mask, Reasons: d.Reasons, Args: make([]checkArgs, 0, len(d.Args))}
	if !d.IsReply() {
		call, tool := d.Call, d.Tool
		l.Call, l.Tool = &call, &tool
	}
	if l.Reasons == nil {
		l.Reasons = []string{}
	}
	for _, a := range d.Args {
		v := a.Value
		if len(v) == 0 {
			v = json.RawMessage("null")
		}
		l.Args = append(l.Args, checkArgs{Path: a.Path, Value: v, Status: a.Status, Evidence: a.Where.String(), Record: a.Where.Record})
	}
	return l
}

// printDecision writes one table row, and one indented row per argument
// whose value is not a plain literal.
func printDecision(w io.Writer, r grounding.Result, d grounding.DecisionResult) {
	call, tool := "-", "(reply)"
	if !d.IsReply() {
		call, tool = strconv.Itoa(d.Call), d.Tool
	}
	reasons := strings.Join(d.Reasons, ",")
	if reasons == "" {
		reasons = "-"
	}
	fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%d\t%s\n", r.Trajectory, d.Message, call, tool, d.Verdict, d.Mask, reasons)
	for _, a := range d.Args {
		if a.Status == grounding.StatusLiteral || a.Status == grounding.StatusEnum || a.Status == grounding.StatusFreeText {
			continue
		}
		fmt.Fprintf(w, "\t\t\t  %s = %s\t%s\t\t%s\n", a.Path, clipValue(a.Value), a.Status, a.Where.String())
	}
}

func clipValue(v json.RawMessage) string {
	s := string(v)
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func printSummary(w io.Writer, s checkSummary) {
	a := s.Audit
	files := "files"
	if s.Files == 1 {
		files = "file"
	}
	fmt.Fprintf(w, "\n%d %s, %d trajectories (%d successful, %d certified), %d decisions\n",
		s.Files, files, a.Trajectories, a.Successful, a.Certified, a.Decisions)
	fmt.Fprintf(w, "verdicts: pass %d, fail %d, ambiguous %d (queued for a human: %d); decided automatically %.1f%%\n",
		a.Verdicts[grounding.VerdictPass], a.Verdicts[grounding.VerdictFail], a.Verdicts[grounding.VerdictAmbiguous], a.Queued, 100*a.AutoDecidedShare)
	fmt.Fprintf(w, "supervised decisions (mask 1): %d\n", a.Supervised)
	var parts []string
	for _, code := range grounding.ReasonCodes {
		if n := a.Reasons[code]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", code, n))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "reasons: %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "pool audit: %.1f%% of certified trajectories have at most two supervised decisions; %.1f%% have a supervised decision after a real error\n",
		100*a.AtMostTwoSupervisedShare, 100*a.CertifiedAfterErrorShare)
	if len(s.FailedFiles) > 0 {
		fmt.Fprintf(w, "files not read: %s\n", strings.Join(s.FailedFiles, ", "))
	}
}
