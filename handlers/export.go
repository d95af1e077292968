package handlers

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/klauspost/compress/gzip"

	"groundwork/grounding"
	"groundwork/views"
)

// exportStore is what the export downloads and the download page need from
// storage.
type exportStore interface {
	Runs(ctx context.Context) ([]grounding.Run, error)
	// Run and RunByName return grounding.ErrNotFound for an unknown run.
	Run(ctx context.Context, id int64) (grounding.Run, error)
	RunByName(ctx context.Context, name string) (grounding.Run, error)
	RunFacets(ctx context.Context, runID int64) (domains, tools []string, err error)
	// CoverageScales returns the project's model scales.
	CoverageScales(ctx context.Context) ([]grounding.Scale, error)
	// Views lists the saved views of the runs; ViewByName returns
	// grounding.ErrNotFound for a run without that view.
	Views(ctx context.Context, runIDs []int64) ([]grounding.CoverageView, error)
	ViewByName(ctx context.Context, runID int64, name string) (grounding.CoverageView, error)
	// ExportSummary counts what Export would yield now.
	ExportSummary(ctx context.Context, f grounding.ExportFilter) (grounding.ExportSummary, error)
	// Export streams one snapshot: begin once the snapshot is taken, then
	// each per trajectory; it returns the summary of what it passed on.
	// Errors before begin mean nothing was read.
	Export(ctx context.Context, f grounding.ExportFilter, begin func(snapshot time.Time) error, each func(*grounding.ExportTrajectory) error) (grounding.ExportSummary, error)
}

// Export serves the export downloads (/api/export/{run}/…) and the page
// that builds their links.
type Export struct {
	log   *slog.Logger
	store exportStore
	// abort breaks the connection after a failure in the middle of a
	// download (tests replace it).
	abort func()
}

// NewExport returns the export handlers.
func NewExport(log *slog.Logger, store exportStore) *Export {
	return &Export{log: log, store: store, abort: func() { panic(http.ErrAbortHandler) }}
}

// Masks streams masks.jsonl.
func (h *Export) Masks(w http.ResponseWriter, r *http.Request) { h.stream(w, r, grounding.ExportMasks) }

// SFT streams sft.jsonl.
func (h *Export) SFT(w http.ResponseWriter, r *http.Request) { h.stream(w, r, grounding.ExportSFT) }

// CSV streams decisions.csv.
func (h *Export) CSV(w http.ResponseWriter, r *http.Request) { h.stream(w, r, grounding.ExportCSV) }

// exportParams are the query parameters of an export URL.
var exportParams = []string{"view", "scale", "domain", "source", "complete", "include_empty", "ids", "limit"}

// exportRunName is the run named in an export URL. chi matches the
// escaped path only when Go kept one (r.URL.RawPath: the path has escapes
// that decoding would lose, such as %2F); otherwise it matches the decoded
// path and the parameter is decoded already. Decoding it again would read
// run "x%2541" as "xA", another run, and refuse "50%25".
func exportRunName(r *http.Request) (string, error) {
	name := chi.URLParam(r, "run")
	if r.URL.RawPath != "" {
		var err error
		if name, err = url.PathUnescape(name); err != nil {
			name = ""
		}
	}
	if name == "" || !textOK(name) {
		return "", badRequest("The run name in the address is not valid.")
	}
	return name, nil
}

// strictQuery parses r's query, refusing what URL.Query drops without a
// word (a pair with a semicolon or a bad %-escape): dropped, source=human
// would fall back to every verdict and widen the export.
func strictQuery(r *http.Request) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, badRequest("The address's query is not valid (" + err.Error() + "): separate parameters with & and escape % as %25.")
	}
	return q, nil
}

// textOK: valid UTF-8 without NUL, the only text the databases store
// (Postgres refuses the rest with an error, SQLite would just not find it).
func textOK(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// exportQuery reads an export URL's query into f. Anything it cannot use is
// a 400 naming the parameter (a typo must not silently widen an export).
// The scale and view are names here; exportResolve checks them.
func exportQuery(q url.Values, f *grounding.ExportFilter) error {
	for k := range q {
		if !slices.Contains(exportParams, k) {
			return badRequest(fmt.Sprintf("Unknown parameter %q; an export takes %s.", k, strings.Join(exportParams, ", ")))
		}
	}
	for _, k := range exportParams {
		if len(q[k]) > 1 {
			return badRequest(fmt.Sprintf("The parameter %q is given %d times.", k, len(q[k])))
		}
		if !textOK(q.Get(k)) {
			return badRequest(fmt.Sprintf("The parameter %q is not valid UTF-8 text.", k))
		}
	}
	f.View = strings.TrimSpace(q.Get("view"))
	f.Scale = grounding.Scale{Name: strings.TrimSpace(q.Get("scale"))}
	f.Domain = q.Get("domain")
	src, err := grounding.ParseVerdictSource(q.Get("source"))
	if err != nil {
		return badRequest(fmt.Sprintf("Unknown verdict source %q: use auto, human or any.", q.Get("source")))
	}
	f.Source = src
	if f.Complete, err = boolQuery(q, "complete", true); err != nil {
		return err
	}
	if f.IncludeEmpty, err = boolQuery(q, "include_empty", false); err != nil {
		return err
	}
	if f.IDs, err = boolQuery(q, "ids", false); err != nil {
		return err
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return badRequest(fmt.Sprintf("The limit must be a whole number of trajectories (0 for all), not %q.", s))
		}
		f.Limit = n
	}
	return nil
}

func boolQuery(q url.Values, name string, def bool) (bool, error) {
	switch strings.ToLower(q.Get(name)) {
	case "":
		return def, nil
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	}
	return false, badRequest(fmt.Sprintf("The parameter %q must be true or false, not %q.", name, q.Get(name)))
}

// exportResolve fills f's run, scale and view from their names: an unknown
// run or view is a 404, an unknown scale (or one that is not the view's) a
// 400 listing the scales.
func (h *Export) exportResolve(ctx context.Context, runName string, f *grounding.ExportFilter) error {
	if !textOK(runName) {
		return badRequest("The run name is not valid UTF-8 text.")
	}
	run, err := h.exportRun(ctx, runName)
	if err != nil {
		return err
	}
	f.RunID, f.RunName = run.ID, run.Name
	if f.Domain != "" {
		// An unknown domain (or "Airline" for airline) would export
		// nothing, with a 200 a script takes for an empty run.
		domains, _, err := h.store.RunFacets(ctx, run.ID)
		if err != nil {
			return err
		}
		if !slices.Contains(domains, f.Domain) {
			has := "it records no domain"
			if len(domains) > 0 {
				has = "its domains are " + strings.Join(domains, ", ")
			}
			return badRequest(fmt.Sprintf("Run %q has no trajectories of domain %q; %s.", run.Name, f.Domain, has))
		}
	}
	if f.Scale.Name != "" {
		scales, err := h.store.CoverageScales(ctx)
		if err != nil {
			return err
		}
		scale, err := grounding.FindScale(scales, f.Scale.Name)
		if err != nil {
			names := make([]string, len(scales))
			for i, s := range scales {
				names[i] = s.Name
			}
			return badRequest(fmt.Sprintf("Unknown model scale %q: the scales are %s.", f.Scale.Name, strings.Join(names, ", ")))
		}
		f.Scale = scale
	}
	if f.View != "" {
		v, err := h.store.ViewByName(ctx, run.ID, f.View)
		if errors.Is(err, grounding.ErrNotFound) {
			return Error(http.StatusNotFound, fmt.Sprintf("Run %q has no saved view named %q.", run.Name, f.View))
		}
		if err != nil {
			return err
		}
		if f.Scale.Name != "" && !strings.EqualFold(f.Scale.Name, v.Scale.Name) {
			return badRequest(fmt.Sprintf("View %q was selected for scale %s, not %s.", v.Name, v.Scale.Name, f.Scale.Name))
		}
		f.View, f.ViewID, f.Scale = v.Name, v.ID, v.Scale
	}
	return nil
}

// exportRun finds the run of an export URL: by name, or, when no run has
// that name and it is a number, by id.
func (h *Export) exportRun(ctx context.Context, name string) (grounding.Run, error) {
	run, err := h.store.RunByName(ctx, name)
	if errors.Is(err, grounding.ErrNotFound) {
		if id, perr := strconv.ParseInt(name, 10, 64); perr == nil && id > 0 {
			run, err = h.store.Run(ctx, id)
		}
	}
	if errors.Is(err, grounding.ErrNotFound) {
		return run, Error(http.StatusNotFound, fmt.Sprintf("There is no run named %q.", name))
	}
	return run, err
}

// errHead ends a HEAD request once the headers are out.
var errHead = errors.New("head request: headers only")

// stream answers one download. Everything that can be refused is refused
// before the first byte, with its status. The 200 and the first line leave
// as soon as the snapshot is taken; once they are out, a failure ends the
// body with an error trailer line and breaks the connection, so no client
// mistakes a cut file for a whole one.
func (h *Export) stream(w http.ResponseWriter, r *http.Request, format grounding.ExportFormat) {
	name, err := exportRunName(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q, err := strictQuery(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	f := grounding.ExportFilter{Format: format}
	if err := exportQuery(q, &f); err != nil {
		h.fail(w, r, err)
		return
	}
	if err := h.exportResolve(r.Context(), name, &f); err != nil {
		h.fail(w, r, err)
		return
	}

	enc := grounding.NewExportEncoder(f)
	var (
		out   *exportWriter
		buf   []byte
		began bool
	)
	sum, err := h.store.Export(r.Context(), f, func(at time.Time) error {
		began = true
		hd := w.Header()
		hd.Set("Content-Type", enc.ContentType())
		hd.Set("Content-Disposition", enc.ContentDisposition(at))
		hd.Set("X-Groundwork-Snapshot", at.UTC().Format(time.RFC3339Nano))
		hd.Set("X-Accel-Buffering", "no") // proxies: pass the stream on as it comes
		hd.Add("Vary", "Accept-Encoding")
		gz := acceptsGzip(r)
		if gz {
			hd.Set("Content-Encoding", "gzip")
		}
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodHead {
			return errHead
		}
		out = newExportWriter(w, gz)
		buf = enc.Header(buf[:0], at)
		if err := out.write(buf); err != nil {
			return err
		}
		return out.flush() // the first line leaves at once
	}, func(t *grounding.ExportTrajectory) error {
		var err error
		if buf, err = enc.Trajectory(buf[:0], t); err != nil {
			return err
		}
		return out.write(buf)
	})
	switch {
	case errors.Is(err, errHead):
		return
	case err == nil:
		if err = out.write(enc.Trailer(buf[:0], sum)); err == nil {
			err = out.close()
		}
		if err == nil {
			return
		}
	case !began:
		h.fail(w, r, err)
		return
	}
	// Mid-stream: say so in the body, then cut the connection.
	msg := "internal error (request id " + requestID(r) + ")"
	level := slog.LevelError
	if r.Context().Err() != nil {
		msg, level = "the request was canceled", slog.LevelWarn
	}
	written, _, _ := enc.Written()
	h.log.LogAttrs(r.Context(), level, "export failed mid-stream",
		slog.String("request_id", requestID(r)), slog.String("path", r.URL.Path),
		slog.Int("trajectories_written", written), slog.Any("err", err))
	if out != nil {
		_ = out.write(enc.ErrorTrailer(buf[:0], msg))
		_ = out.close()
	}
	h.abort()
}

// fail answers an export request that failed before its first byte with the
// status fail would choose and a plain-text message (a script reads it).
func (h *Export) fail(w http.ResponseWriter, r *http.Request, err error) {
	APIFail(h.log, w, r, err)
}

// APIFail answers r with err as plain text: the status and message fail
// would choose (5xx never shows err), logged the same way. The export API
// and its token check use it, since scripts read the body.
func APIFail(log *slog.Logger, w http.ResponseWriter, r *http.Request, err error) {
	status, message := classify(err)
	level := failLevel(w, status)
	if level == slog.LevelError {
		message = "Internal error (request id " + requestID(r) + ")"
	}
	if log == nil {
		log = slog.Default()
	}
	log.LogAttrs(r.Context(), level, "request failed",
		slog.String("request_id", requestID(r)),
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", status),
		slog.Any("err", err),
	)
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, strconv.Itoa(status)+" "+http.StatusText(status)+": "+message+"\n")
}

// acceptsGzip reports whether the client takes a gzip body (Accept-Encoding
// lists gzip, or *, without q=0).
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for part := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			coding = strings.ToLower(strings.TrimSpace(coding))
			if coding != "gzip" && coding != "*" {
				continue
			}
			if _, qv, ok := strings.Cut(strings.ToLower(params), "q="); ok {
				if w, err := strconv.ParseFloat(strings.TrimSpace(qv), 64); err == nil && w == 0 {
					return false
				}
			}
			return true
		}
	}
	return false
}

// flushEvery is how much output is buffered between flushes: large enough
// that a flush (and a gzip sync marker) costs nothing, small enough that
// the client sees steady progress.
const flushEvery = 1 << 20

// exportWriter buffers (and maybe gzips) a download and flushes it through
// every wrapper of the ResponseWriter.
type exportWriter struct {
	rc    *http.ResponseController
	gz    *gzip.Writer // nil when not compressing
	buf   *bufio.Writer
	since int
}

func newExportWriter(w http.ResponseWriter, compress bool) *exportWriter {
	x := &exportWriter{rc: http.NewResponseController(w)}
	var dst io.Writer = w
	if compress {
		// Fastest level: the export streams at over 100 MB/s, and the
		// default level would cut that to a third for a few % of size.
		x.gz, _ = gzip.NewWriterLevel(w, gzip.BestSpeed)
		dst = x.gz
	}
	x.buf = bufio.NewWriterSize(dst, 64<<10)
	return x
}

func (x *exportWriter) write(p []byte) error {
	if _, err := x.buf.Write(p); err != nil {
		return err
	}
	x.since += len(p)
	if x.since >= flushEvery {
		return x.flush()
	}
	return nil
}

func (x *exportWriter) flush() error {
	x.since = 0
	if err := x.buf.Flush(); err != nil {
		return err
	}
	if x.gz != nil {
		if err := x.gz.Flush(); err != nil {
			return err
		}
	}
	if err := x.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

func (x *exportWriter) close() error {
	if err := x.buf.Flush(); err != nil {
		return err
	}
	if x.gz != nil {
		if err := x.gz.Close(); err != nil {
			return err
		}
	}
	if err := x.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// Page renders the download page. Its form is a plain GET form on this
// page, so without JavaScript the page itself shows the count; with htmx
// each change refreshes the count region only.
func (h *Export) Page(w http.ResponseWriter, r *http.Request) {
	runs, err := h.store.Runs(r.Context())
	if err != nil {
		h.pageFail(w, r, err)
		return
	}
	domains, _, err := h.store.RunFacets(r.Context(), 0) // every run's
	if err != nil {
		h.pageFail(w, r, err)
		return
	}
	scales, err := h.store.CoverageScales(r.Context())
	if err != nil {
		h.pageFail(w, r, err)
		return
	}
	saved, err := h.store.Views(r.Context(), nil)
	if err != nil {
		h.pageFail(w, r, err)
		return
	}
	q := r.URL.Query()
	p := views.ExportPage{Form: exportForm(q, runs, domains, scales, saved), TokensURL: "/tokens"}
	if len(runs) == 0 {
		p.Count = views.ExportCount{Error: "There is no run to export yet: import a log first."}
	} else {
		// The figures count over the run (a second on 30,000
		// trajectories): the page shows the link at once and fetches them.
		p.Count, _ = h.count(r, q, runs[0].Name, q.Get("count") == "1")
	}
	render(w, r, http.StatusOK, page{title: "Export", section: "export", body: views.Export(p), fragment: views.ExportSummary(p.Count)})
}

// Count renders the count region for the form's current values: how many
// trajectories and decisions the link downloads, the link and a curl
// command. A form value the export would refuse is shown with 422.
func (h *Export) Count(w http.ResponseWriter, r *http.Request) {
	q, err := strictQuery(r)
	if err != nil {
		_, msg := classify(err)
		renderFragment(w, r, http.StatusUnprocessableEntity, views.ExportSummary(views.ExportCount{Error: msg}))
		return
	}
	c, status := h.count(r, q, "", true)
	renderFragment(w, r, status, views.ExportSummary(c))
}

func (h *Export) pageFail(w http.ResponseWriter, r *http.Request, err error) { fail(h.log, w, r, err) }

// count resolves the form into an export link and, with figures, counts
// it; without, the result says where to fetch the figures from.
func (h *Export) count(r *http.Request, form url.Values, defaultRun string, figures bool) (views.ExportCount, int) {
	refuse := func(err error) (views.ExportCount, int) {
		status, msg := classify(err)
		if status >= 500 {
			h.log.Error("export count", "request_id", requestID(r), "err", err)
			msg = "Internal error (request id " + requestID(r) + ")"
		}
		return views.ExportCount{Error: msg}, http.StatusUnprocessableEntity
	}
	name := cmpOr(form.Get("run"), defaultRun)
	if name == "" {
		return refuse(badRequest("Choose a run."))
	}
	format, err := grounding.ParseExportFormat(cmpOr(form.Get("format"), string(grounding.ExportSFT)))
	if err != nil {
		return refuse(badRequest("Choose masks, sft or csv."))
	}
	q := exportLinkQuery(form)
	f := grounding.ExportFilter{Format: format}
	if err := exportQuery(q, &f); err != nil {
		return refuse(err)
	}
	if err := h.exportResolve(r.Context(), name, &f); err != nil {
		return refuse(err)
	}
	var s grounding.ExportSummary
	if figures {
		if s, err = h.store.ExportSummary(r.Context(), f); err != nil {
			return refuse(err)
		}
	} else {
		s.Snapshot = time.Now()
	}
	link := "/api/export/" + url.PathEscape(f.RunName) + "/" + grounding.ExportFile(format)
	if enc := q.Encode(); enc != "" {
		link += "?" + enc
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	file := grounding.NewExportEncoder(f).FileName(s.Snapshot)
	c := views.ExportCount{URL: link, FileName: file,
		Curl: fmt.Sprintf(`curl -fS --compressed -H "Authorization: Bearer $GROUNDWORK_TOKEN" -o %s '%s://%s%s'`, file, scheme, r.Host, link)}
	if !figures {
		cq := url.Values{"run": {f.RunName}, "format": {string(format)}}
		for k, v := range q {
			cq[k] = v
		}
		c.CountURL = "/export/count?" + cq.Encode()
		return c, http.StatusOK
	}
	c.Trajectories, c.Decisions = count(s.Trajectories), count(s.Decisions)
	c.Supervised, c.Parents = count(s.Supervised), count(s.Parents)
	c.Snapshot = s.Snapshot.UTC().Format("2006-01-02 15:04:05 UTC")
	c.Empty = s.Trajectories == 0
	return c, http.StatusOK
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// exportLinkQuery keeps the form values that change an export from its
// defaults, as the download link's query.
func exportLinkQuery(form url.Values) url.Values {
	q := url.Values{}
	for _, k := range exportParams {
		v := strings.TrimSpace(form.Get(k))
		switch {
		case v == "",
			k == "complete" && v == "true",
			k == "source" && v == string(grounding.VerdictSourceAny),
			k == "limit" && v == "0",
			(k == "include_empty" || k == "ids") && v == "false":
			continue
		}
		q.Set(k, v)
	}
	return q
}

// exportForm is the form's state for the query.
func exportForm(q url.Values, runs []grounding.Run, domains []string, scales []grounding.Scale, saved []grounding.CoverageView) views.ExportForm {
	opt := func(value, label, current string) views.Option {
		return views.Option{Value: value, Label: label, Selected: value == current}
	}
	var f views.ExportForm
	for _, run := range runs {
		n := count(run.Trajectories) + " trajectories"
		if run.Trajectories == 1 {
			n = "1 trajectory"
		}
		f.Runs = append(f.Runs, opt(run.Name, run.Name+" ("+n+")", q.Get("run")))
	}
	format := cmpOr(q.Get("format"), string(grounding.ExportSFT))
	f.Formats = []views.Option{
		opt("sft", "SFT (OpenAI chat JSONL)", format),
		opt("masks", "masks JSONL", format),
		opt("csv", "decisions CSV", format),
	}
	f.Scales = []views.Option{opt("", "none (or the view's)", q.Get("scale"))}
	for _, s := range scales {
		f.Scales = append(f.Scales, opt(s.Name, fmt.Sprintf("%s (depth %d)", s.Name, s.Depth), q.Get("scale")))
	}
	f.Views = []views.Option{opt("", "whole run", q.Get("view"))}
	seen := map[string]bool{}
	for _, v := range saved {
		if seen[v.Name] {
			continue // names are per run; the count says when the run has none by that name
		}
		seen[v.Name] = true
		f.Views = append(f.Views, opt(v.Name, fmt.Sprintf("%s (%s, %s parents)", v.Name, v.Scale.Name, count(v.Parents)), q.Get("view")))
	}
	f.Domains = []views.Option{opt("", "all", q.Get("domain"))}
	for _, d := range domains {
		f.Domains = append(f.Domains, opt(d, d, q.Get("domain")))
	}
	source := cmpOr(q.Get("source"), "any")
	f.Sources = []views.Option{
		opt("any", "all (human overrides auto)", source),
		opt("human", "human verdicts only", source),
		opt("auto", "automatic only", source),
	}
	complete := cmpOr(q.Get("complete"), "true")
	f.Complete = []views.Option{
		opt("true", "leave out trajectories still queued", complete),
		opt("false", "include them", complete),
	}
	f.IncludeEmpty = q.Get("include_empty") == "true"
	f.IDs = q.Get("ids") == "true"
	f.Limit = q.Get("limit")
	return f
}
