package handlers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"groundwork/grounding"
	"groundwork/views"
)

// fileImporter imports one uploaded file (web implements it for the CLI
// and this page alike).
type fileImporter interface {
	// ImportFile imports the file at path (already fully written) into run
	// runName ("" = derive from displayName), all or nothing. Duplicate
	// content gives Duplicate=true. Bad content gives an error wrapping
	// grounding.ErrInvalid and a trajectory id clash one wrapping
	// grounding.ErrConflict; both Error() texts are written for the user.
	ImportFile(ctx context.Context, runName, path, displayName string, format grounding.Format) (grounding.ImportResult, error)
}

// Imports serves the upload page.
type Imports struct {
	log      *slog.Logger
	imp      fileImporter
	maxBytes int64
	dir      string
}

// NewImports returns the upload handlers. Uploads up to maxBytes are
// spooled to temporary files in dir ("" = os.TempDir()).
func NewImports(log *slog.Logger, imp fileImporter, maxBytes int64, dir string) *Imports {
	return &Imports{log: log, imp: imp, maxBytes: maxBytes, dir: dir}
}

// formats are the choices of the format select, "auto" first.
var formats = []grounding.Format{grounding.FormatAuto, grounding.FormatCanonical, grounding.FormatTauBench, grounding.FormatOpenAI}

// Form shows the upload form.
func (h *Imports) Form(w http.ResponseWriter, r *http.Request) {
	h.show(w, r, http.StatusOK, importForm("", grounding.FormatAuto, h.maxBytes), nil)
}

// upload is what the multipart form carried.
type upload struct {
	runName string
	format  string
	file    string // the temp file, "" when no file part came
	name    string // the user's file name
}

// Create streams the uploaded file to a temp file (never holding it in
// memory), imports it and shows the outcome: 413 over the size limit, 422
// for content the importer refuses (with its precise message), 500 for
// anything else. The temp file is always removed.
func (h *Imports) Create(w http.ResponseWriter, r *http.Request) {
	// The cap on the file part is exact; the body may carry a little more
	// (the other fields, the multipart framing).
	r.Body = http.MaxBytesReader(w, r.Body, h.maxBytes+1<<20)
	up, err := h.receive(r)
	if up.file != "" {
		defer os.Remove(up.file)
	}
	form := importForm(up.runName, grounding.Format(up.format), h.maxBytes)
	var tooBig *http.MaxBytesError
	switch {
	case errors.Is(err, errTooLarge) || errors.As(err, &tooBig):
		h.refuse(w, r, http.StatusRequestEntityTooLarge, form, fmt.Sprintf("%s: file is larger than the %s upload limit", orName(up.name), byteSize(h.maxBytes)))
		return
	case err != nil:
		var he *httpError
		if errors.As(err, &he) {
			h.refuse(w, r, he.status, form, he.message)
			return
		}
		h.fail(w, r, err)
		return
	}
	if up.file == "" {
		h.refuse(w, r, http.StatusUnprocessableEntity, form, "Choose a file to import.")
		return
	}
	if up.runName != "" {
		if p := grounding.RunNameProblem(up.runName); p != "" {
			form.RunName = "" // not echoed back into the form
			h.refuse(w, r, http.StatusUnprocessableEntity, form, p+" Nothing was imported.")
			return
		}
	}
	format, err := grounding.ParseFormat(up.format)
	if err != nil {
		h.refuse(w, r, http.StatusUnprocessableEntity, form, fmt.Sprintf("unknown format %q: choose auto, canonical, tau-bench or openai-jsonl", up.format))
		return
	}
	res, err := h.imp.ImportFile(r.Context(), up.runName, up.file, up.name, format)
	switch {
	case errors.Is(err, grounding.ErrInvalid), errors.Is(err, grounding.ErrConflict):
		msg := userMessage(err)
		// An importer's own error names file, record, line and field; the
		// layers above it only add prefixes the user has no use for.
		if ie := (*grounding.ImportError)(nil); errors.As(err, &ie) {
			msg = ie.Error()
		}
		h.refuse(w, r, http.StatusUnprocessableEntity, form, msg)
		return
	case err != nil:
		h.fail(w, r, err)
		return
	}
	h.log.Info("import", "request_id", requestID(r), "file", up.name, "run", res.RunName,
		"trajectories", res.Trajectories, "duplicate", res.Duplicate)
	h.show(w, r, http.StatusOK, form, importResult(res, up.name))
}

var errTooLarge = errors.New("upload larger than the limit")

// receive reads the multipart body part by part. The file part is copied to
// a temp file through a reader capped at maxBytes+1, so an oversized file
// is detected without reading the rest of it.
func (h *Imports) receive(r *http.Request) (upload, error) {
	var up upload
	mr, err := r.MultipartReader()
	if err != nil {
		return up, Error(http.StatusBadRequest, "Expected a multipart/form-data upload.")
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return up, nil
		}
		if err != nil {
			return up, uploadError(err)
		}
		switch part.FormName() {
		case "run":
			up.runName, err = smallField(part)
			up.runName = strings.TrimSpace(up.runName)
		case "format":
			up.format, err = smallField(part)
		case "file":
			err = h.spool(part, &up)
		default:
			_, err = io.Copy(io.Discard, io.LimitReader(part, 1<<20))
		}
		part.Close()
		if err != nil {
			return up, err
		}
	}
}

// spool copies the file part to a temp file.
func (h *Imports) spool(part *multipart.Part, up *upload) error {
	name := filepath.Base(strings.ReplaceAll(part.FileName(), `\`, "/"))
	if part.FileName() == "" || name == "." || name == "/" {
		// An empty file input still sends a part, with no file name.
		_, err := io.Copy(io.Discard, io.LimitReader(part, 1<<20))
		return err
	}
	if up.file != "" {
		return Error(http.StatusUnprocessableEntity, "Upload one file at a time.")
	}
	up.name = grounding.CleanFileName(name)
	f, err := os.CreateTemp(h.dir, "upload-*")
	if err != nil {
		return fmt.Errorf("import: create temp file: %w", err)
	}
	up.file = f.Name()
	n, err := io.Copy(f, io.LimitReader(part, h.maxBytes+1))
	if cerr := f.Close(); err == nil && cerr != nil {
		return fmt.Errorf("import: write temp file: %w", cerr)
	}
	if err != nil {
		return uploadError(err)
	}
	if n > h.maxBytes {
		return errTooLarge
	}
	return nil
}

// uploadError classifies a failure to read the request body: over the body
// cap is 413, anything else (a dropped connection, broken framing) is the
// client's 400.
func uploadError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return errTooLarge
	}
	var pathErr *os.PathError
	if errors.As(err, &pathErr) {
		return fmt.Errorf("import: write temp file: %w", err) // our disk, not the client
	}
	return Error(http.StatusBadRequest, "The upload was interrupted or malformed; nothing was imported.")
}

// smallField reads a text field of at most 1 KiB.
func smallField(p *multipart.Part) (string, error) {
	b, err := io.ReadAll(io.LimitReader(p, 1025))
	if err != nil {
		return "", uploadError(err)
	}
	if len(b) > 1024 {
		return "", Error(http.StatusUnprocessableEntity, "The field "+p.FormName()+" is too long.")
	}
	return string(b), nil
}

func (h *Imports) refuse(w http.ResponseWriter, r *http.Request, status int, form views.ImportForm, message string) {
	h.log.Warn("upload refused", "request_id", requestID(r), "method", r.Method, "path", r.URL.Path, "status", status, "reason", message)
	h.show(w, r, status, form, &views.ImportResult{Error: message})
}

// show renders the upload page; the form's htmx request gets only the
// outcome panel.
func (h *Imports) show(w http.ResponseWriter, r *http.Request, status int, form views.ImportForm, res *views.ImportResult) {
	p := page{title: "Import", section: "import", body: views.Import(views.ImportPage{Form: form, Result: res})}
	if res != nil {
		p.fragment = views.ImportOutcome(*res)
	}
	render(w, r, status, p)
}

func (h *Imports) fail(w http.ResponseWriter, r *http.Request, err error) { fail(h.log, w, r, err) }

func importForm(runName string, selected grounding.Format, maxBytes int64) views.ImportForm {
	if selected == "" {
		selected = grounding.FormatAuto
	}
	f := views.ImportForm{RunName: runName, Limit: byteSize(maxBytes), MaxBytes: strconv.FormatInt(maxBytes, 10)}
	for _, v := range formats {
		label := string(v)
		if v == grounding.FormatAuto {
			label = "auto-detect"
		}
		f.Formats = append(f.Formats, views.Option{Value: string(v), Label: label, Selected: v == selected})
	}
	return f
}

func importResult(res grounding.ImportResult, name string) *views.ImportResult {
	file := res.File
	if file == "" {
		file = name
	}
	out := &views.ImportResult{
		File:         file,
		Format:       res.Format,
		RunName:      res.RunName,
		Trajectories: count(res.Trajectories),
		Messages:     count(res.Messages),
		Decisions:    count(res.Decisions),
	}
	if res.RunID > 0 {
		out.RunURL = runURL(res.RunID)
	}
	out.Note = sweImportNote(res)
	if res.Duplicate {
		out.RunName = res.PreviousRun
		out.Duplicate = fmt.Sprintf("This file was already imported into run %s on %s; nothing was added.",
			res.PreviousRun, dateTime(res.PreviousAt))
	}
	return out
}

func orName(name string) string {
	if name == "" {
		return "the upload"
	}
	return name
}
