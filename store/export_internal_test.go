package store

import (
	"context"
	"testing"
	"time"

	"groundwork/grounding"
)

// TestExportRenderingsMatchMessages: trajectories imported before
// trajectory_sft existed have no rendering, and an export renders them from
// their messages. Both ways must write the same bytes, in every format, so
// that a database migrated from before gives the exports a new one would.
func TestExportRenderingsMatchMessages(t *testing.T) {
	for name, open := range coverageStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db := open(t)
			res, err := db.ImportTrajectories(ctx, "pool",
				grounding.ImportResult{File: "pool.jsonl", Format: "canonical", SHA256: "pool"},
				func(yield func(*grounding.Trajectory, error) bool) {
					for tr := range grounding.Generate(grounding.GenOptions{Trajectories: 60, Seed: 3, Kind: "mixed"}) {
						if !yield(tr, nil) {
							return
						}
					}
				})
			if err != nil {
				t.Fatal(err)
			}
			var rendered int
			if err := db.x.GetContext(ctx, &rendered, `SELECT COUNT(*) FROM trajectory_sft`); err != nil || rendered != 60 {
				t.Fatalf("%d renderings kept (%v), want 60", rendered, err)
			}
			export := func(f grounding.ExportFilter) string {
				f.RunID, f.RunName = res.RunID, "pool"
				e := grounding.NewExportEncoder(f)
				var out []byte
				_, err := db.Export(ctx, f, func(time.Time) error { return nil }, func(tr *grounding.ExportTrajectory) error {
					var err error
					out, err = e.Trajectory(out, tr)
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				return string(out)
			}
			filters := []grounding.ExportFilter{
				{Format: grounding.ExportSFT, IncludeEmpty: true},
				{Format: grounding.ExportSFT, IDs: true},
				{Format: grounding.ExportMasks, IncludeEmpty: true},
				{Format: grounding.ExportCSV},
			}
			var before []string
			for _, f := range filters {
				before = append(before, export(f))
			}
			if _, err := db.x.ExecContext(ctx, `DELETE FROM trajectory_sft`); err != nil {
				t.Fatal(err)
			}
			for i, f := range filters {
				after := export(f)
				if len(before[i]) < 1000 {
					t.Fatalf("%s export of %d bytes: the pool exported (almost) nothing", f.Format, len(before[i]))
				}
				if after != before[i] {
					n := 0
					for n < min(len(after), len(before[i])) && after[n] == before[i][n] {
						n++
					}
					t.Errorf("%s export without the renderings differs at byte %d:\n%.300s\nwith them:\n%.300s",
						f.Format, n, after[max(n-100, 0):], before[i][max(n-100, 0):])
				}
			}
		})
	}
}
