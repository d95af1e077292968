package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"groundwork/grounding"
)

// coverageFigure reads one audit figure of the coverage page.
func coverageFigure(t *testing.T, body, testid string) string {
	t.Helper()
	doc := parse(t, body)
	return strings.TrimSpace(doc.Find(`[data-testid="` + testid + `"] dd`).First().Text())
}

// TestCoverageEndToEnd: every logged-in user sees the coverage page; a
// lead's verdict moves its figures at once (the cache follows the store);
// only researchers and admins save views and change scales; a saved view is
// what exports find by name.
func TestCoverageEndToEnd(t *testing.T) {
	a, run := startAdjudication(t)
	ctx := context.Background()
	rid := strconv.FormatInt(run.ID, 10)
	page := "/coverage?run=" + rid + "&scale=8B"

	ann := a.client()
	a.login(ann, "ann")
	resp, body := a.do(ann, "GET", page, nil, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("annotator GET %s = %d", page, resp.StatusCode)
	}
	supervised := coverageFigure(t, body, "fig-supervised")

	// An admin passes a queued decision of a certified trajectory: one more
	// supervised decision, shown without any restart.
	ada, err := a.db.UserByName(ctx, "ada")
	if err != nil {
		t.Fatal(err)
	}
	claim, err := a.db.Next(ctx, ada.ID, grounding.QueueFilter{RunID: run.ID}, time.Minute)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	res, err := a.db.Submit(ctx, ada.ID, claim.Item.ID, grounding.VerdictPass, "grounded after all", time.Minute)
	if err != nil || res.Human != grounding.VerdictPass {
		t.Fatalf("Submit = %+v, %v (the fixture's overlap must be 1)", res, err)
	}
	_, body = a.do(ann, "GET", page, nil, nil)
	before, _ := strconv.Atoi(strings.ReplaceAll(supervised, ",", ""))
	after, _ := strconv.Atoi(strings.ReplaceAll(coverageFigure(t, body, "fig-supervised"), ",", ""))
	if after != before+1 {
		t.Errorf("supervised decisions %d after a pass verdict, want %d", after, before+1)
	}

	form := url.Values{"run": {rid}, "scale": {"8B"}, "budget": {"1"}, "name": {"core-8B"}}
	post := func(c *http.Client, path string, v url.Values) *http.Response {
		resp, _ := a.do(c, "POST", path, strings.NewReader(v.Encode()),
			a.sameOrigin(map[string]string{"Content-Type": "application/x-www-form-urlencoded"}))
		return resp
	}
	if resp := post(ann, "/coverage/views", form); resp.StatusCode != http.StatusForbidden {
		t.Errorf("annotator POST /coverage/views = %d, want 403", resp.StatusCode)
	}
	if resp := post(ann, "/coverage/scales", url.Values{"name": {"70B"}, "depth": {"12"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("annotator POST /coverage/scales = %d, want 403", resp.StatusCode)
	}

	rita := a.client()
	a.login(rita, "rita")
	resp = post(rita, "/coverage/views", form)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/coverage/views/") {
		t.Fatalf("researcher POST /coverage/views = %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp := post(rita, "/coverage/views", form); resp.StatusCode != http.StatusConflict {
		t.Errorf("saving the same name again = %d, want 409", resp.StatusCode)
	}
	v, err := a.db.ViewByName(ctx, run.ID, "core-8B")
	if err != nil {
		t.Fatalf("ViewByName: %v", err)
	}
	ids, err := a.db.ViewTrajectoryIDs(ctx, v.ID, run.ID)
	if err != nil || len(ids) == 0 || v.Parents != 1 {
		t.Errorf("view %+v has trajectories %v (%v)", v, ids, err)
	}
	resp, body = a.do(ann, "GET", resp.Header.Get("Location"), nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(body, "weight-histogram") {
		t.Errorf("annotator GET the view page = %d", resp.StatusCode)
	}
	if resp := post(rita, "/coverage/scales", url.Values{"name": {"70B"}, "depth": {"12"}, "back": {page}}); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("researcher POST /coverage/scales = %d", resp.StatusCode)
	}
	resp, body = a.do(ann, "GET", "/coverage?run="+rid+"&scale=70B", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(body, "70B → target depth 12") {
		t.Errorf("GET with the new scale = %d", resp.StatusCode)
	}
}
