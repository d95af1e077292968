package web

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"groundwork/grounding"
)

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// runExport writes an export to stdout, exactly as the HTTP download does:
// header line, trajectories, trailer. A failure after the header ends the
// output with an error trailer and a non-zero exit.
func runExport(ctx context.Context, args []string, getenv Env, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var dbf dbFlags
	dbf.register(fs)
	runName := fs.String("run", "", "run to export (required)")
	format := fs.String("format", "sft", "masks, sft or csv")
	view := fs.String("view", "", "export only this saved coverage view of the run")
	scale := fs.String("scale", "", "model scale (1.7B, 4B, 8B, 14B, 30B-A3B or a configured one)")
	domain := fs.String("domain", "", "only this domain")
	source := fs.String("source", "any", "verdict source: auto, human or any")
	complete := fs.Bool("complete", true, "leave out trajectories with decisions still queued")
	includeEmpty := fs.Bool("include-empty", false, "keep trajectories with nothing to supervise")
	ids := fs.Bool("ids", false, "SFT: add id, parent_id and sample_weight to each line")
	limit := fs.Int("limit", 0, "at most this many trajectories (0: all)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *runName == "" {
		return errors.New("usage: groundwork export --run NAME --format masks|sft|csv [--view V] [--scale S] > FILE")
	}
	f := grounding.ExportFilter{Domain: *domain, Complete: *complete, IncludeEmpty: *includeEmpty, IDs: *ids, Limit: *limit}
	if f.Format, err = grounding.ParseExportFormat(*format); err != nil {
		return fmt.Errorf("export: --format %q: expected masks, sft or csv", *format)
	}
	if f.Source, err = grounding.ParseVerdictSource(*source); err != nil {
		return fmt.Errorf("export: --source %q: expected auto, human or any", *source)
	}
	if f.Limit < 0 {
		return errors.New("export: --limit must be 0 or more")
	}
	db, err := dbf.open(ctx, getenv)
	if err != nil {
		return err
	}
	defer db.Close()
	run, err := db.RunByName(ctx, *runName)
	if errors.Is(err, grounding.ErrNotFound) {
		return fmt.Errorf("export: there is no run named %q", *runName)
	}
	if err != nil {
		return err
	}
	f.RunID, f.RunName = run.ID, run.Name
	if *scale != "" {
		scales, err := db.CoverageScales(ctx)
		if err != nil {
			return err
		}
		if f.Scale, err = grounding.FindScale(scales, *scale); err != nil {
			return fmt.Errorf("export: --scale: %w", err)
		}
	}
	if *view != "" {
		v, err := db.ViewByName(ctx, run.ID, *view)
		if errors.Is(err, grounding.ErrNotFound) {
			return fmt.Errorf("export: run %q has no saved view named %q", run.Name, *view)
		}
		if err != nil {
			return err
		}
		if f.Scale.Name != "" && !strings.EqualFold(f.Scale.Name, v.Scale.Name) {
			return fmt.Errorf("export: view %q was selected for scale %s, not %s", v.Name, v.Scale.Name, f.Scale.Name)
		}
		f.View, f.ViewID, f.Scale = v.Name, v.ID, v.Scale
	}

	start := time.Now()
	cw := &countingWriter{w: stdout}
	out := bufio.NewWriterSize(cw, 1<<20)
	enc := grounding.NewExportEncoder(f)
	var buf []byte
	began := false
	sum, err := db.Export(ctx, f, func(at time.Time) error {
		began = true
		buf = enc.Header(buf[:0], at)
		_, err := out.Write(buf)
		return err
	}, func(t *grounding.ExportTrajectory) error {
		var err error
		if buf, err = enc.Trajectory(buf[:0], t); err != nil {
			return err
		}
		_, err = out.Write(buf)
		return err
	})
	if err != nil {
		if began {
			_, _ = out.Write(enc.ErrorTrailer(buf[:0], err.Error()))
			_ = out.Flush()
		}
		return fmt.Errorf("export: %w", err)
	}
	if _, err := out.Write(enc.Trailer(buf[:0], sum)); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := out.Flush(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	n, d, s := enc.Written()
	secs := time.Since(start).Seconds()
	fmt.Fprintf(stderr, "exported %d trajectories, %d decisions (%d supervised) of run %q as %s: %.1f MB in %.2f s (%.0f MB/s)\n",
		n, d, s, run.Name, f.Format, float64(cw.n)/1e6, secs, float64(cw.n)/1e6/secs)
	return nil
}

const tokenUsage = `usage:
  groundwork token create --user NAME [--name LABEL]   prints a new API token once
  groundwork token list   --user NAME
  groundwork token revoke --user NAME ID`

// runToken manages API tokens from the command line.
func runToken(ctx context.Context, args []string, getenv Env, stdout, stderr io.Writer) error {
	if len(args) == 0 || !slices.Contains([]string{"create", "list", "revoke"}, args[0]) {
		return errors.New(tokenUsage)
	}
	sub := args[0]
	fs := flag.NewFlagSet("token "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var dbf dbFlags
	dbf.register(fs)
	userName := fs.String("user", "", "the account the token acts as (required)")
	label := fs.String("name", "", "a label for the token (default: cli and the date)")
	pos, err := parse(fs, args[1:])
	if err != nil {
		return err
	}
	if *userName == "" || (sub == "revoke") != (len(pos) == 1) || (sub != "revoke" && len(pos) > 0) {
		return errors.New(tokenUsage)
	}
	db, err := dbf.open(ctx, getenv)
	if err != nil {
		return err
	}
	defer db.Close()
	u, err := db.UserByName(ctx, *userName)
	if errors.Is(err, grounding.ErrNotFound) {
		return fmt.Errorf("token: there is no user named %q", *userName)
	}
	if err != nil {
		return err
	}
	switch sub {
	case "create":
		if !slices.Contains(exportRoles, u.Role) {
			return fmt.Errorf("token: %s is an %s; only researchers and admins may export", u.Name, u.Role)
		}
		name := *label
		if name == "" {
			name = "cli " + time.Now().UTC().Format(time.DateOnly)
		}
		t, secret, err := db.CreateAPIToken(ctx, u.ID, name)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "created API token %q (%s…) for %s; it is shown once:\n", t.Name, t.Prefix, u.Name)
		fmt.Fprintln(stdout, secret)
	case "list":
		ts, err := db.APITokens(ctx, u.ID)
		if err != nil {
			return err
		}
		for _, t := range ts {
			state := "active"
			if t.Revoked() {
				state = "revoked " + t.RevokedAt.Format(time.DateTime)
			}
			used := "never used"
			if !t.LastUsedAt.IsZero() {
				used = "last used " + t.LastUsedAt.Format(time.DateTime)
			}
			fmt.Fprintf(stdout, "%d\t%s…\t%s\tcreated %s\t%s\t%s\n", t.ID, t.Prefix, t.Name, t.CreatedAt.Format(time.DateTime), used, state)
		}
	case "revoke":
		id, err := strconv.ParseInt(pos[0], 10, 64)
		if err != nil {
			return fmt.Errorf("token revoke: %q is not a token id (see groundwork token list)", pos[0])
		}
		if err := db.RevokeAPIToken(ctx, u.ID, id); errors.Is(err, grounding.ErrNotFound) {
			return fmt.Errorf("token revoke: %s has no token %d", u.Name, id)
		} else if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked token %d of %s\n", id, u.Name)
	}
	return nil
}
