package views_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"groundwork/views"
)

func renderDoc(t *testing.T, c templ.Component) (*goquery.Document, string) {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		t.Fatalf("render: %v", err)
	}
	html := buf.String()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return doc, html
}

const hiddenOnly = "certificate_7504069"

func card() views.DecisionCard {
	return views.DecisionCard{
		ID:      "d0",
		Title:   "decision 1 of 3",
		Message: "message 2",
		Kind:    "get_user_details",
		Visible: views.VisiblePane{
			Before:  "before message 2",
			Earlier: views.EarlierButton{Count: "24", URL: "/trajectories/1/messages?before=1&limit=50&visible=1"},
			Messages: []views.MessageView{
				{Index: "1", Role: "user", Content: views.Content{Text: "my id is mia_li_3668 <script>alert(1)</script>"}},
			},
		},
		Action: views.ActionPane{
			Tool: "get_user_details",
			Args: views.Content{Text: "{\n  \"user_id\": \"mia_li_3668\"\n}", Mono: true},
			Observation: &views.MessageView{
				Index: "3", Role: "tool", Name: "get_user_details", Error: true,
				Content: views.Content{Text: "<script>alert(1)</script>", Mono: true},
			},
		},
		Hidden: views.HiddenPane{Items: []views.HiddenItem{{
			Kind: "teacher_hint", Where: "message 1 · system", Summary: "use " + hiddenOnly,
			Content: views.Content{Text: "teacher note: use " + hiddenOnly},
		}}},
	}
}

func TestDecisionPanes(t *testing.T) {
	doc, html := renderDoc(t, views.Decisions(views.DecisionChunk{Cards: []views.DecisionCard{card()}}))

	dec := doc.Find(`[data-testid=decision]`)
	if dec.Length() != 1 {
		t.Fatalf("decisions = %d, want 1", dec.Length())
	}
	if id, _ := dec.Attr("id"); id != "d0" {
		t.Errorf("decision id = %q, want d0", id)
	}
	var order []string
	dec.Find(`[data-testid$=-pane]`).Each(func(_ int, s *goquery.Selection) {
		v, _ := s.Attr("data-testid")
		order = append(order, v)
	})
	if got, want := strings.Join(order, ","), "visible-pane,action-pane,hidden-pane"; got != want {
		t.Errorf("pane order = %s, want %s", got, want)
	}
	if n := strings.Count(html, hiddenOnly); n == 0 {
		t.Fatalf("hidden text missing from the page")
	}
	if s := dec.Find(`[data-testid=hidden-pane]`).Text(); !strings.Contains(s, hiddenOnly) {
		t.Errorf("hidden pane = %q, want it to contain %s", s, hiddenOnly)
	}
	for _, pane := range []string{"visible-pane", "action-pane"} {
		if s := dec.Find(`[data-testid=` + pane + `]`).Text(); strings.Contains(s, hiddenOnly) {
			t.Errorf("%s shows hidden-only text: %q", pane, s)
		}
	}
	if strings.Contains(html, "<script>") {
		t.Errorf("a <script> from the log was rendered as markup:\n%s", html)
	}
	if doc.Find("script").Length() != 0 {
		t.Errorf("rendered a script element")
	}
	if s := dec.Find(`[data-testid=action-pane]`).Text(); !strings.Contains(s, "<script>alert(1)</script>") {
		t.Errorf("the observation should show the script as text; action pane = %q", s)
	}
	if s := dec.Find(`[data-testid=earlier]`).Text(); !strings.Contains(s, "24 earlier messages") {
		t.Errorf("earlier button = %q", s)
	}
	if s := dec.Find(`[data-testid=action-pane] .badge.fail`).Text(); !strings.Contains(s, "error") {
		t.Errorf("error observation has no error badge; badges = %q", s)
	}
}

func TestDecisionEmptyStates(t *testing.T) {
	c := card()
	c.Hidden = views.HiddenPane{}
	c.Action.Observation = nil
	doc, _ := renderDoc(t, views.Decisions(views.DecisionChunk{Cards: []views.DecisionCard{c}, MoreURL: "/trajectories/1/decisions?from=20", NextURL: "/trajectories/1?from=20#d20"}))
	if s := doc.Find(`[data-testid=hidden-pane]`).Text(); !strings.Contains(s, "no hidden context recorded") {
		t.Errorf("hidden pane = %q", s)
	}
	if doc.Find(`[data-testid=no-observation]`).Length() != 1 {
		t.Errorf("no 'no observation' note")
	}
	more := doc.Find(`[data-testid=more-decisions]`)
	if v, _ := more.Attr("hx-trigger"); v != "revealed" {
		t.Errorf("more hx-trigger = %q", v)
	}
	if v, _ := more.Find("a").Attr("href"); v != "/trajectories/1?from=20#d20" {
		t.Errorf("fallback link = %q", v)
	}
}

func TestInvalidArgumentsAndTruncation(t *testing.T) {
	c := card()
	c.Action.ArgsInvalid = true
	c.Action.Args = views.Content{Text: `{"user_id": "mia`, Mono: true}
	c.Visible.Messages[0].Content = views.Content{Text: "long…", Truncated: true, Size: "5,000 characters", FullURL: "/trajectories/1/messages/1"}
	doc, _ := renderDoc(t, views.Decisions(views.DecisionChunk{Cards: []views.DecisionCard{c}}))
	if s := doc.Find(`[data-testid=args-invalid]`).Text(); s != "arguments are not valid JSON" {
		t.Errorf("args-invalid = %q", s)
	}
	btn := doc.Find(`[data-testid=visible-pane] [data-testid=show-all]`)
	if v, _ := btn.Attr("hx-get"); v != "/trajectories/1/messages/1" {
		t.Errorf("show all hx-get = %q", v)
	}
}

func TestLayout(t *testing.T) {
	doc, html := renderDoc(t, views.Layout(views.Chrome{Title: "Runs", UserName: "ann <b>", UserRole: "annotator"}, views.ErrorPage(404, "gone")))
	if doc.Find("#alerts").Length() != 1 {
		t.Errorf("layout has no #alerts")
	}
	if v, _ := doc.Find("body").Attr("hx-boost"); v != "true" {
		t.Errorf("body hx-boost = %q", v)
	}
	cfg, _ := doc.Find(`meta[name=htmx-config]`).Attr("content")
	if !strings.Contains(cfg, `"responseHandling"`) || !strings.Contains(cfg, `"code":"422","swap":true`) {
		t.Errorf("htmx-config = %q", cfg)
	}
	if strings.Contains(html, "<b>") {
		t.Errorf("user name not escaped")
	}
	if doc.Find(`a[href="/import"]`).Length() != 0 {
		t.Errorf("an annotator's nav links to /import")
	}
	if doc.Find(`form[action="/logout"][method=post]`).Length() != 1 {
		t.Errorf("no logout POST form")
	}
	for _, src := range []string{"htmx-2.0.11.min.js", "app.js"} {
		if doc.Find(`script[src*="`+src+`"]`).Length() != 1 {
			t.Errorf("no script %s", src)
		}
	}
	doc.Find("script").Each(func(_ int, s *goquery.Selection) {
		if strings.TrimSpace(s.Text()) != "" {
			t.Errorf("inline script (forbidden by the CSP): %q", s.Text())
		}
	})
}

func TestResultsPager(t *testing.T) {
	r := views.TrajectoryResults{
		Rows:  []views.TrajectoryRow{{URL: "/trajectories/9", ExtID: "t-9", Success: "yes", Succeeded: true}},
		Pager: views.Pager{NextURL: "/runs/1?after=t-9", MoreURL: "/runs/1/trajectories?after=t-9"},
	}
	doc, _ := renderDoc(t, views.Results(r))
	if v, _ := doc.Find(`[data-testid=next-page]`).Attr("href"); v != "/runs/1?after=t-9" {
		t.Errorf("next page = %q", v)
	}
	lm := doc.Find(`[data-testid=load-more]`)
	if v, _ := lm.Attr("hx-get"); v != "/runs/1/trajectories?after=t-9" {
		t.Errorf("load more = %q", v)
	}
	if v, _ := lm.Attr("hx-swap"); v != "beforeend" {
		t.Errorf("load more swap = %q", v)
	}
	// The rows fragment swaps the pager out of band.
	doc, _ = renderDoc(t, views.TrajectoryRows(r.Rows, views.Pager{}))
	if v, _ := doc.Find(`#pager`).Attr("hx-swap-oob"); v != "true" {
		t.Errorf("pager oob = %q", v)
	}
}
