package handlers

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"

	"github.com/a-h/templ"

	"groundwork/grounding"
	"groundwork/views"
)

// page is what render needs to answer a request: the body of the full page
// (wrapped in views.Layout) and, for URLs that also serve in-place htmx
// updates, the fragment. A nil fragment means the URL always answers with
// the full page.
type page struct {
	title    string
	section  string // highlighted nav entry
	body     templ.Component
	fragment templ.Component
}

// render writes p with status: the fragment alone for a partial htmx
// request (see isPartial), otherwise the body inside the layout. It always
// sets Vary: HX-Request so caches never mix the two shapes.
func render(w http.ResponseWriter, r *http.Request, status int, p page) {
	var c templ.Component
	if p.fragment != nil && isPartial(r) {
		c = p.fragment
	} else {
		c = views.Layout(chrome(r.Context(), p.title, p.section), p.body)
	}
	write(w, r, status, c)
}

// renderFragment writes c alone: for URLs only htmx requests.
func renderFragment(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	write(w, r, status, c)
}

// renderBuffers keeps render buffers between requests: growing a fresh one
// to a 47 KB trajectory page was a third of the bytes a page allocated
// (137 KB of 409), and the collector's work under 16 concurrent clients
// showed in the tail latencies. Buffers grown past maxPooledBuffer (a
// 5,000-message trajectory's page) are left to the collector.
var renderBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBuffer = 1 << 20

// write renders c into a buffer first, so a failing component becomes a
// clean 500 instead of a half-written page.
func write(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	buf := renderBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= maxPooledBuffer {
			renderBuffers.Put(buf)
		}
	}()
	if err := c.Render(r.Context(), buf); err != nil {
		slog.Default().Error("render", "path", r.URL.Path, "err", err)
		w.Header().Add("Vary", HXRequest)
		http.Error(w, "Internal error (request id "+requestID(r)+")", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Add("Vary", HXRequest)
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// chrome is the layout's view of the logged-in user.
func chrome(ctx context.Context, title, section string) views.Chrome {
	c := views.Chrome{Title: title, Section: section}
	if u, ok := CurrentUser(ctx); ok {
		c.UserName = u.Name
		c.UserRole = u.Role
		c.CanImport = CanImport(u.Role)
		c.CanLead = grounding.CanLead(u.Role)
		c.IsAdmin = u.Role == grounding.RoleAdmin
	}
	return c
}
