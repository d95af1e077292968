package web

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"groundwork/grounding"
	"groundwork/store"
)

// Importer imports one log file into the store: it hashes the file (so the
// same content is never imported twice), detects its format, and streams its
// trajectories into one all-or-nothing store transaction. The CLI and the
// upload page share it.
type Importer struct {
	DB *store.DB
}

// ImportFile imports the file at path into run runName ("" derives the run
// from displayName). displayName names the file in every message.
func (i Importer) ImportFile(ctx context.Context, runName, path, displayName string, format grounding.Format) (grounding.ImportResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return grounding.ImportResult{}, fmt.Errorf("import: %w", err) // the *PathError names the file
	}
	defer f.Close()
	return i.importReader(ctx, runName, f, displayName, format)
}

func (i Importer) importReader(ctx context.Context, runName string, f io.ReadSeeker, displayName string, format grounding.Format) (grounding.ImportResult, error) {
	h := sha256.New()
	size, err := io.Copy(h, f)
	if err != nil {
		return grounding.ImportResult{}, fmt.Errorf("import: read %s: %w", displayName, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return grounding.ImportResult{}, fmt.Errorf("import: rewind %s: %w", displayName, err)
	}
	br := bufio.NewReaderSize(f, 1<<20)
	if format == "" || format == grounding.FormatAuto {
		if kind, ok := grounding.DetectSWEData(br); ok {
			return i.importSWEData(ctx, runName, br, displayName, kind)
		}
		format, err = grounding.Detect(br)
		if err != nil {
			return grounding.ImportResult{}, withFile(err, displayName)
		}
	}
	if runName == "" {
		runName = RunNameFor(displayName)
	}
	meta := grounding.ImportResult{
		File:   displayName,
		Format: string(format),
		SHA256: hex.EncodeToString(h.Sum(nil)),
		Bytes:  size,
	}
	res, err := i.DB.ImportTrajectories(ctx, runName, meta, grounding.Read(br, displayName, format))
	if err == nil && !res.Duplicate && grounding.IsSWETrajectoryFormat(format) {
		i.refreshSWE(ctx, res.RunID)
	}
	// A problem with the file's content is reported as the importer words
	// it (file, record, line, field, expectation), without the layers it
	// passed through on the way.
	var ie *grounding.ImportError
	if errors.As(err, &ie) {
		return res, ie
	}
	return res, err
}

// withFile makes sure a detection error names the file.
func withFile(err error, file string) error {
	if ie, ok := err.(*grounding.ImportError); ok && ie.File == "" {
		ie.File = file
	}
	return err
}

// RunNameFor derives a run name from a file name: its base name without the
// usual log extensions ("logs/gpt-4o-airline.json" → "gpt-4o-airline").
func RunNameFor(file string) string {
	name := filepath.Base(file)
	for _, ext := range []string{".gz", ".jsonl", ".json", ".traj"} {
		name = strings.TrimSuffix(name, ext)
	}
	if name == "." {
		name = ""
	}
	// A file name may hold what a run name may not (invalid UTF-8, control
	// characters, more than 200 bytes): those become "_", or it is cut.
	return grounding.RunNameFrom(name, "imported")
}
