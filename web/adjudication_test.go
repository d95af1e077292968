package web_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-chi/chi/v5"
	"golang.org/x/crypto/bcrypt"

	"groundwork/grounding"
	"groundwork/web"
)

// adjudicationFixture is a canonical JSONL pool whose checks queue 14
// decisions: airport codes the user only named as cities (vis.knowledge)
// and a card chosen among three visible ones (vis.choice).
const adjudicationFixture = "testdata/adjudication.jsonl"

// startAdjudication starts the app of startApp with the fixture imported as
// run "adj" and an admin "ada"; it returns the run.
func startAdjudication(t *testing.T) (*app, grounding.Run) {
	t.Helper()
	a := startApp(t)
	ctx := context.Background()
	b, err := os.ReadFile(adjudicationFixture)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := web.ImportBytes(ctx, a.db, "adj", "adjudication.jsonl", b); err != nil {
		t.Fatalf("import fixture: %v", err)
	}
	addUser(t, a, "ada", grounding.RoleAdmin)
	run, err := a.db.RunByName(ctx, "adj")
	if err != nil {
		t.Fatal(err)
	}
	return a, run
}

func addUser(t *testing.T, a *app, name, role string) {
	t.Helper()
	hash, _ := bcrypt.GenerateFromPassword([]byte("password-"+name), bcrypt.MinCost)
	if _, err := a.db.CreateUser(context.Background(), name, role, hash); err != nil {
		t.Fatal(err)
	}
}

// TestAdjudicationFixtureQueues: the fixture really leaves decisions to a
// human, for the reasons it was written for.
func TestAdjudicationFixtureQueues(t *testing.T) {
	b, err := os.ReadFile(adjudicationFixture)
	if err != nil {
		t.Fatal(err)
	}
	queued := map[string]int{}
	n := 0
	for tr, err := range grounding.Read(bytes.NewReader(b), adjudicationFixture, grounding.FormatAuto) {
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range grounding.CheckDefault(tr).Decisions {
			if d.Queued {
				n++
				for _, r := range d.Reasons {
					queued[r]++
				}
			}
		}
	}
	if n != 14 || queued[grounding.ReasonKnowledge] != 6 || queued[grounding.ReasonChoice] != 8 {
		t.Errorf("the fixture queues %d decisions, by reason %v; want 14: 6 vis.knowledge, 8 vis.choice", n, queued)
	}
}

var itemRe = regexp.MustCompile(`data-item="(\d+)"`)

// TestAdjudicationRoles checks every adjudication route for every role:
// anonymous users are sent to log in, annotators adjudicate, researchers and
// admins also review conflicts, set overlap and manage queues, and only
// admins manage accounts.
func TestAdjudicationRoles(t *testing.T) {
	a, run := startAdjudication(t)
	ctx := context.Background()
	page, err := a.db.Queue(ctx, grounding.QueueFilter{RunID: run.ID})
	if err != nil || len(page.Items) == 0 {
		t.Fatalf("queue: %v", err)
	}
	item := strconv.FormatInt(page.Items[len(page.Items)-1].ID, 10) // claimed by nobody
	traj := strconv.FormatInt(page.Items[0].TrajectoryID, 10)
	rid := strconv.FormatInt(run.ID, 10)
	const login = "login" // a redirect to the login page
	type route struct {
		method, path string
		form         url.Values
		// want per role: anonymous, annotator, researcher, admin.
		want [4]any
	}
	routes := []route{
		{"GET", "/review", nil, [4]any{login, 200, 200, 200}},
		{"POST", "/review/undo", url.Values{}, [4]any{login, 409, 409, 409}},
		{"POST", "/review/" + item + "/verdict", url.Values{"verdict": {"pass"}}, [4]any{login, 409, 409, 409}},
		{"POST", "/review/" + item + "/skip", url.Values{}, [4]any{login, 409, 409, 409}},
		{"POST", "/review/" + item + "/note", url.Values{"note": {"looked at it"}}, [4]any{login, 303, 303, 303}},
		{"POST", "/review/" + item + "/renew", url.Values{}, [4]any{login, 409, 409, 409}},
		{"GET", "/queue", nil, [4]any{login, 200, 200, 200}},
		{"GET", "/trajectories/" + traj + "/decisions/0/history", nil, [4]any{login, 200, 200, 200}},
		{"GET", "/queue/conflicts", nil, [4]any{login, 403, 200, 200}},
		{"POST", "/queue/" + item + "/final", url.Values{"verdict": {"pass"}, "reason": {"r"}}, [4]any{login, 403, 409, 409}},
		{"POST", "/trajectories/" + traj + "/decisions/0/enqueue", url.Values{"note": {"look"}}, [4]any{login, 403, 303, 303}},
		{"POST", "/runs/" + rid + "/overlap", url.Values{"k": {"1"}}, [4]any{login, 403, 303, 303}},
		{"GET", "/agreement", nil, [4]any{login, 403, 200, 200}},
		{"POST", "/queue/prioritize", url.Values{"run": {rid}, "scale": {"8B"}}, [4]any{login, 403, 303, 303}},
		{"GET", "/admin/users", nil, [4]any{login, 403, 403, 200}},
		{"POST", "/admin/users", url.Values{"name": {""}}, [4]any{login, 403, 403, 422}},
	}
	roles := []string{"", "ann", "rita", "ada"}
	for ri, who := range roles {
		c := a.client()
		if who != "" {
			a.login(c, who)
		}
		for _, rt := range routes {
			name := who
			if name == "" {
				name = "anonymous"
			}
			t.Run(name+" "+rt.method+" "+rt.path, func(t *testing.T) {
				var body *strings.Reader
				hdr := a.sameOrigin(nil)
				if rt.form != nil {
					body = strings.NewReader(rt.form.Encode())
					hdr["Content-Type"] = "application/x-www-form-urlencoded"
				} else {
					body = strings.NewReader("")
				}
				resp, text := a.do(c, rt.method, rt.path, body, hdr)
				switch want := rt.want[ri].(type) {
				case string:
					if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/login") {
						t.Errorf("= %d %q, want a redirect to /login", resp.StatusCode, resp.Header.Get("Location"))
					}
				case int:
					if resp.StatusCode != want {
						t.Errorf("= %d, want %d\n%.600s", resp.StatusCode, want, text)
					}
					if want == 403 && !strings.Contains(text, "cannot open this page") {
						t.Errorf("403 without the role message")
					}
				}
			})
		}
	}
}

// TestEveryRouteNeedsLogin walks the whole route table: apart from the
// public pages, no route answers an anonymous request with content. It
// catches a route mounted outside the login group.
func TestEveryRouteNeedsLogin(t *testing.T) {
	a := startApp(t)
	h, err := web.NewHandler(web.Config{UploadDir: t.TempDir()}, a.db, a.imp)
	if err != nil {
		t.Fatal(err)
	}
	routes, ok := h.(chi.Routes)
	if !ok {
		t.Skip("the handler is not a chi router")
	}
	public := map[string]bool{"/healthz": true, "/static/*": true, "/favicon.ico": true, "/login": true, "/logout": true}
	param := regexp.MustCompile(`\{[^}]+\}`)
	err = chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if public[route] {
			return nil
		}
		path := param.ReplaceAllString(route, "1")
		resp, _ := a.do(a.client(), method, path, strings.NewReader(""), a.sameOrigin(nil))
		refused := resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden ||
			resp.StatusCode == http.StatusSeeOther && strings.HasPrefix(resp.Header.Get("Location"), "/login")
		if !refused {
			t.Errorf("anonymous %s %s = %d %q; want a login redirect, 401 or 403", method, path, resp.StatusCode, resp.Header.Get("Location"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAdjudicationHTTPConcurrent runs eight annotators at once through the
// real handlers (htmx requests, as the review screen sends them), some
// double-clicking: every item ends with exactly one verdict, no item is
// shown to two annotators, and every click answered "recorded" is in the
// history once.
func TestAdjudicationHTTPConcurrent(t *testing.T) {
	a, run := startAdjudication(t)
	const annotators = 8
	var names []string
	for i := range annotators {
		n := "ann" + strconv.Itoa(i)
		addUser(t, a, n, grounding.RoleAnnotator)
		names = append(names, n)
	}
	htmx := func(extra map[string]string) map[string]string {
		h := a.sameOrigin(map[string]string{"HX-Request": "true", "Content-Type": "application/x-www-form-urlencoded"})
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	var (
		mu       sync.Mutex
		shown    = map[string]map[string]bool{} // item → annotators it was shown to
		recorded = map[string]int{}
		problems []string
	)
	var wg sync.WaitGroup
	for i, name := range names {
		c := a.client()
		a.login(c, name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, body := a.do(c, "GET", "/review?run="+strconv.FormatInt(run.ID, 10), nil, htmx(nil))
			for step := 0; step < 40; step++ {
				m := itemRe.FindStringSubmatch(body)
				if m == nil {
					if !strings.Contains(body, `data-testid="review-empty"`) {
						mu.Lock()
						problems = append(problems, name+": neither an item nor the empty state")
						mu.Unlock()
					}
					return
				}
				item := m[1]
				mu.Lock()
				if shown[item] == nil {
					shown[item] = map[string]bool{}
				}
				shown[item][name] = true
				mu.Unlock()
				form := url.Values{"verdict": {"pass"}, "run": {strconv.FormatInt(run.ID, 10)}}.Encode()
				if (i+step)%3 == 0 {
					// A double click: the same verdict twice, the second
					// answered "already recorded".
					resp, again := a.do(c, "POST", "/review/"+item+"/verdict", strings.NewReader(form), htmx(nil))
					if resp.StatusCode != 200 || !strings.Contains(again, "Recorded") {
						mu.Lock()
						problems = append(problems, name+": first click on "+item+" = "+strconv.Itoa(resp.StatusCode))
						mu.Unlock()
						return
					}
					mu.Lock()
					recorded[item]++
					mu.Unlock()
					resp, body = a.do(c, "POST", "/review/"+item+"/verdict", strings.NewReader(form), htmx(nil))
					if resp.StatusCode != 200 || !strings.Contains(body, "recorded once") {
						mu.Lock()
						problems = append(problems, name+": double click on "+item+" = "+strconv.Itoa(resp.StatusCode))
						mu.Unlock()
					}
					continue
				}
				resp, next := a.do(c, "POST", "/review/"+item+"/verdict", strings.NewReader(form), htmx(nil))
				if resp.StatusCode != 200 || !strings.Contains(next, "Recorded") {
					mu.Lock()
					problems = append(problems, name+": verdict on "+item+" = "+strconv.Itoa(resp.StatusCode))
					mu.Unlock()
					return
				}
				mu.Lock()
				recorded[item]++
				mu.Unlock()
				body = next
			}
		}()
	}
	wg.Wait()
	for _, p := range problems {
		t.Error(p)
	}
	all, err := a.db.Queue(context.Background(), grounding.QueueFilter{RunID: run.ID, State: "all"})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Items) != 14 {
		t.Fatalf("%d items, want 14", len(all.Items))
	}
	for _, it := range all.Items {
		id := strconv.FormatInt(it.ID, 10)
		if it.State != grounding.QueueDone || it.Verdicts != 1 || recorded[id] != 1 {
			t.Errorf("item %s: state %s, %d verdicts in the store, %d acknowledged; want done, 1, 1", id, it.State, it.Verdicts, recorded[id])
		}
		if len(shown[id]) != 1 {
			t.Errorf("item %s was shown to %d annotators: %v", id, len(shown[id]), shown[id])
		}
		h, err := a.db.History(context.Background(), it.TrajectoryID, it.Ordinal)
		if err != nil || len(h.Events) != 1 {
			t.Errorf("item %s history = %+v, %v; want one verdict", id, h.Events, err)
		}
	}
}

// TestQueueFilterOffersEveryRunsFacets: with no run chosen, the queue's
// filter offers the domains of every run (read in one statement); with a run
// chosen, that run's only.
func TestQueueFilterOffersEveryRunsFacets(t *testing.T) {
	a, run := startAdjudication(t)
	b, err := os.ReadFile(adjudicationFixture)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	other := bytes.Replace(bytes.Replace(first, []byte(`"domain":"airline"`), []byte(`"domain":"retail"`), 1), []byte(`"id":"adj-00"`), []byte(`"id":"other-00"`), 1)
	if _, err := web.ImportBytes(context.Background(), a.db, "other", "other.jsonl", other); err != nil {
		t.Fatalf("import: %v", err)
	}
	c := a.client()
	a.login(c, "ada")
	for _, tt := range []struct {
		path      string
		want, not []string
	}{
		{"/queue", []string{`<option value="airline"`, `<option value="retail"`}, nil},
		{"/queue?run=" + strconv.FormatInt(run.ID, 10), []string{`<option value="airline"`}, []string{`<option value="retail"`}},
	} {
		resp, body := a.do(c, "GET", tt.path, nil, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d", tt.path, resp.StatusCode)
		}
		for _, w := range tt.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: no %s in the filter", tt.path, w)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(body, w) {
				t.Errorf("GET %s: %s offered though another run's", tt.path, w)
			}
		}
	}
}
