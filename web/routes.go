package web

import (
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"groundwork/grounding"
	"groundwork/handlers"
	"groundwork/store"
)

// pagesPerCore is how many page requests work at once per core: two, so
// one can wait on the database while the other runs.
const pagesPerCore = 2

// Page requests beyond those working wait in arrival order (chi's
// throttle hands a freed slot to the longest waiter, as a channel does).
// Under load Go's scheduler favors the goroutine readied last, so with 16
// clients on two cores some page requests had waited behind many later
// ones: the queue page's p50 was 16 ms and its p90 42 ms for 2 ms of CPU
// each. Only a flood beyond pageBacklog waiting, or a wait of pageWait,
// is refused (429).
const (
	pageBacklog = 4096
	pageWait    = time.Minute
)

// routes is groundwork's whole HTTP surface, in one place.
func routes(cfg Config, db *store.DB, sessions *scs.SessionManager, imp ImportFiler) http.Handler {
	log := cfg.Logger
	health := handlers.NewHealth(log, db)
	auth := handlers.NewAuth(log, db, sessions)
	runs := handlers.NewRuns(log, db)
	trajectories := handlers.NewTrajectories(log, db)
	imports := handlers.NewImports(log, imp, cfg.MaxUploadBytes, cfg.UploadDir)
	swe := handlers.NewSWE(log, db)
	coverage := handlers.NewCoverage(log, db)
	exports := handlers.NewExport(log, db)
	tokens := handlers.NewTokens(log, db)
	tokens.Base = cfg.BaseURL
	review := handlers.NewReview(log, db, cfg.ClaimLease)
	queue := handlers.NewQueue(log, db)
	users := handlers.NewUsers(log, db)

	// Page requests (not static files, uploads or export downloads) wait
	// their turn in arrival order, a few per core at a time.
	pageSlots := middleware.ThrottleBacklog(pagesPerCore*runtime.GOMAXPROCS(0), pageBacklog, pageWait)
	pages := func(next http.Handler) http.Handler {
		queued := pageSlots(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && r.URL.Path == "/import" {
				next.ServeHTTP(w, r) // an upload takes as long as the file
				return
			}
			queued.ServeHTTP(w, r)
		})
	}

	r := chi.NewRouter()
	r.Use(
		middleware.RequestID,
		clientAddr(cfg.ProxyHops),
		middleware.GetHead, // HEAD /healthz and friends answer like GET
		requestLogger(log),
		middleware.Recoverer,
		securityHeaders(strings.HasPrefix(cfg.BaseURL, "https://")),
		crossOrigin(log), // every unsafe method, before any session work
		compress(),
	)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		handlers.Fail(log, w, r, handlers.Error(http.StatusNotFound, "There is no page at this address."))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		handlers.Fail(log, w, r, handlers.Error(http.StatusMethodNotAllowed, "This address does not accept "+r.Method+"."))
	})

	r.Get("/healthz", health.Show)
	r.Handle("/static/*", staticFiles())
	r.Get("/favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		// No icon; answering 204 keeps browsers from logging a 404 per page.
		w.Header().Set("Cache-Control", "public, max-age=86400")
		w.WriteHeader(http.StatusNoContent)
	})

	// Export downloads (SPEC §6): a Bearer token or the session; plain-text
	// errors, streamed bodies.
	r.Route("/api/export", func(r chi.Router) {
		r.Use(noStore, exportAuth(log, db, sessions))
		r.Get("/{run}/masks.jsonl", exports.Masks)
		r.Get("/{run}/sft.jsonl", exports.SFT)
		r.Get("/{run}/decisions.csv", exports.CSV)
	})

	r.Group(func(r chi.Router) {
		r.Use(noStore, pages, roomForSessionUser, sessions.LoadAndSave, loadUser(log, db, sessions))
		r.Get("/login", auth.LoginForm)
		r.Post("/login", auth.Login)
		r.Post("/logout", auth.Logout)

		r.Group(func(r chi.Router) {
			r.Use(requireLogin(log))
			r.Get("/", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "/runs", http.StatusSeeOther)
			})
			r.Get("/runs", runs.List)
			r.Get("/runs/{runID}", runs.Show)
			r.Get("/runs/{runID}/trajectories", runs.Rows)
			r.Get("/trajectories/{trajectoryID}", trajectories.Show)
			r.Get("/trajectories/{trajectoryID}/decisions", trajectories.Decisions)
			r.Get("/trajectories/{trajectoryID}/messages", trajectories.Messages)
			r.Get("/trajectories/{trajectoryID}/messages/{index}", trajectories.Message)
			r.Get("/trajectories/{trajectoryID}/messages/{index}/raw", trajectories.MessageRaw)
			r.Get("/trajectories/{trajectoryID}/hidden/{entry}", trajectories.Hidden)
			r.Get("/trajectories/{trajectoryID}/hidden/{entry}/raw", trajectories.HiddenRaw)

			// Coverage (SPEC §4): every logged-in user can look.
			r.Get("/coverage", coverage.Show)
			r.Get("/coverage/deficits", coverage.Deficits)
			r.Get("/coverage/selection", coverage.Selection)
			r.Get("/coverage/trajectories", coverage.Trajectories)
			r.Get("/coverage/views/{viewID}", coverage.View)

			// Adjudication: every role judges queued decisions.
			r.Get("/review", review.Show)
			r.Post("/review/undo", review.Undo)
			r.Post("/review/{itemID}/verdict", review.Verdict)
			r.Post("/review/{itemID}/skip", review.Skip)
			r.Post("/review/{itemID}/note", review.Note)
			r.Post("/review/{itemID}/renew", review.Renew)
			r.Get("/queue", queue.List)
			r.Get("/trajectories/{trajectoryID}/decisions/{ordinal}/history", queue.History)

			r.Group(func(r chi.Router) {
				r.Use(requireRole(log, grounding.RoleAdmin, grounding.RoleResearcher))
				r.Get("/import", imports.Form)
				r.Post("/import", imports.Create)

				// SWE diagnostics (SPEC §5), for researchers.
				r.Get("/swe", swe.Compare)
				r.Get("/swe/runs/{runID}", swe.Run)
				r.Get("/swe/trajectories/{trajectoryID}", swe.Trajectory)
				r.Get("/swe/trajectories/{trajectoryID}/steps/{step}", swe.Step)
				r.Get("/swe/instances", swe.Instances)
				r.Get("/swe/instances/{instanceID}", swe.Instance)

				// Coverage: researchers save views and configure scales.
				r.Post("/coverage/views", coverage.SaveView)
				r.Post("/coverage/scales", coverage.SaveScale)
				r.Post("/coverage/scales/delete", coverage.DeleteScale)

				// Export: the page that builds download links, and API tokens.
				r.Get("/export", exports.Page)
				r.Get("/export/count", exports.Count)
				r.Get("/tokens", tokens.List)
				r.Post("/tokens", tokens.Create)
				r.Post("/tokens/{tokenID}/revoke", tokens.Revoke)

				// Leads review conflicts, set overlap and manage queues.
				r.Get("/queue/conflicts", queue.Conflicts)
				r.Post("/queue/prioritize", queue.Prioritize)
				r.Post("/queue/{itemID}/final", queue.Final)
				r.Post("/trajectories/{trajectoryID}/decisions/{ordinal}/enqueue", queue.Enqueue)
				r.Post("/runs/{runID}/overlap", queue.Overlap)
				r.Get("/agreement", queue.Agreement)
			})

			r.Group(func(r chi.Router) {
				r.Use(requireRole(log, grounding.RoleAdmin))
				r.Get("/admin/users", users.List)
				r.Post("/admin/users", users.Create)
				r.Post("/admin/users/{userID}/disable", users.Disable)
				r.Post("/admin/users/{userID}/enable", users.Enable)
				r.Post("/admin/users/{userID}/password", users.ResetPassword)
			})
		})
	})
	return r
}
