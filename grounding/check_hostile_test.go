package grounding

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Agent logs are untrusted. These tests feed the checker and the importer
// documents built to exhaust them: nesting deep enough to overflow a
// recursive walker's stack, and deep paths around many values, which made
// every leaf copy a long path (quadratic).

// deepNest wraps inner in n levels of open (with close after it).
func deepNest(open, inner, close string, n int) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

// manyNumbers is a JSON array of n small numbers.
func manyNumbers(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i % 97))
	}
	b.WriteByte(']')
	return b.String()
}

// hostileObs is a trajectory whose tool answer is obs, followed by a call
// and a reply the checker must judge with obs in the history.
func hostileObs(obs string) *Trajectory {
	return traj("airline").
		user("Hi, I am mia_li_3668.").
		call("get_user_details", `{"user_id": "mia_li_3668"}`, obs).
		call("get_reservation_details", `{"reservation_id": "NO6JO3"}`, `{"reservation_id": "NO6JO3"}`).
		say("Your reservation NO6JO3 is confirmed, mia_li_3668.").
		build()
}

// hostileArgs is a trajectory whose call has arguments args.
func hostileArgs(args string) *Trajectory {
	return traj("airline").
		user("Hi, I am mia_li_3668.").
		call("get_user_details", args, `{"user_id": "mia_li_3668"}`).
		say("Done, mia_li_3668.").
		build()
}

// checkSane checks t and fails unless every decision has a known verdict.
func checkSane(t *testing.T, tr *Trajectory) Result {
	t.Helper()
	r := Check(tr, nil)
	if len(r.Decisions) == 0 {
		t.Fatalf("no decisions")
	}
	for _, d := range r.Decisions {
		switch d.Verdict {
		case VerdictPass, VerdictFail, VerdictAmbiguous:
		default:
			t.Errorf("message %d call %d: verdict %q", d.Message, d.Call, d.Verdict)
		}
	}
	return r
}

// TestHostileDeepNesting: documents nested past any sane depth are checked
// without crashing. A recursive walker overflowed its stack on a tool
// answer of 4 MB of "[" (fatal: no recover, the server dies), so the cases
// run in a child process and the parent reads its exit.
func TestHostileDeepNesting(t *testing.T) {
	if os.Getenv("GROUNDWORK_HOSTILE_CHILD") == "1" {
		hostileDeepChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostileDeepNesting$", "-test.v")
	cmd.Env = append(os.Environ(), "GROUNDWORK_HOSTILE_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "hostile cases done") {
		tail := string(out)
		if len(tail) > 3000 {
			tail = tail[:3000]
		}
		t.Fatalf("checking deeply nested logs failed (%v):\n%s", err, tail)
	}
}

func hostileDeepChild(t *testing.T) {
	const n = 4 << 20 // just under maxIndexedMessage: all of it is indexed
	for _, tc := range []struct {
		name string
		tr   *Trajectory
	}{
		{"answer [[[[", hostileObs(strings.Repeat("[", n-100))},
		{"answer {\"a\":{\"a\":", hostileObs(strings.Repeat(`{"a":`, (n-100)/5))},
		{"answer balanced 20000", hostileObs(deepNest("[", `"NO6JO3"`, "]", 20000))},
		{"arguments [[[[", hostileArgs(strings.Repeat("[", n))},
		{"hidden [[[[", traj("airline").user("Hi, I am mia_li_3668.").
			hiddenMsg(HiddenUserInstruction, strings.Repeat("[", n)).
			call("get_user_details", `{"user_id": "mia_li_3668"}`, "ok").
			say("Done.").build()},
	} {
		r := checkSane(t, tc.tr)
		t.Logf("%s: %d decisions", tc.name, len(r.Decisions))
	}
	// The whole file, through the importer: a record nested too deep is
	// refused by name (encoding/json stops at 10,000 levels); the record
	// before it still reads.
	ok := `{"id":"ok","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`
	deep := `{"id":"deep","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,` +
		`"tool_calls":[{"id":"c1","name":"f","arguments":{"a":` + deepNest("[", "1", "]", 20000) + `}}]}]}`
	var got []string
	var ierr *ImportError
	for tr, err := range Read(strings.NewReader(ok+"\n"+deep+"\n"), "deep.jsonl", FormatAuto) {
		if err != nil {
			if !errors.As(err, &ierr) {
				t.Fatalf("error %v is not an ImportError", err)
			}
			break
		}
		checkSane(t, tr)
		got = append(got, tr.ID)
	}
	if ierr == nil || ierr.Record != 1 || ierr.Field != "messages[1].tool_calls[0].arguments.a[0][0]…" ||
		!strings.Contains(ierr.Error(), "nested at most 10000 levels") {
		t.Errorf("import error = %v (field %q), want record 1 named at its arguments", ierr, ierr.Field)
	}
	if len(got) != 1 || got[0] != "ok" {
		t.Errorf("read %v before the refused record, want [ok]", got)
	}
	// A whole file that is nothing but "[": refused, not a crash.
	for _, err := range Read(strings.NewReader(strings.Repeat("[", n)), "brackets.json", FormatAuto) {
		if err == nil {
			t.Error("a file of [ read as a trajectory")
		}
		break
	}
	fmt.Println("hostile cases done")
}

// TestWalkerDepthLimit: JSON up to maxJSONDepth levels is walked as JSON,
// deeper is not (the checker then reads it as text).
func TestWalkerDepthLimit(t *testing.T) {
	var w jsonWalker
	noop := func(*jsonWalker, byte, string, float64, int, int) {}
	if !w.walkLeaves(deepNest("[", "1", "]", maxJSONDepth), noop) {
		t.Errorf("%d levels not walked", maxJSONDepth)
	}
	if w.walkLeaves(deepNest("[", "1", "]", maxJSONDepth+1), noop) {
		t.Errorf("%d levels walked", maxJSONDepth+1)
	}
	if json.Valid([]byte(deepNest("[", "1", "]", maxJSONDepth+1))) {
		t.Errorf("encoding/json accepts %d levels: the limits no longer agree", maxJSONDepth+1)
	}
}

// TestHostilePaths: a path keeps its segments exactly up to 64 levels and
// 256 bytes, and past that is cut on a segment with "…", in the evidence
// of the call's arguments.
func TestHostilePaths(t *testing.T) {
	long := strings.Repeat("k", 300)
	for _, tc := range []struct {
		name, args, want string
	}{
		{"64 levels exact", `{"x":` + deepNest(`{"a":`, `"NO6JO3"`, "}", 63) + "}",
			"x" + strings.Repeat(".a", 63)},
		{"65 levels cut", `{"x":` + deepNest(`{"a":`, `"NO6JO3"`, "}", 64) + "}",
			"x" + strings.Repeat(".a", 63) + "…"},
		{"deep arrays cut", `{"x":` + deepNest("[", `"NO6JO3"`, "]", 5000) + "}",
			"x" + strings.Repeat("[0]", 63) + "…"},
		{"key of 300 bytes", `{"` + long + `": "NO6JO3"}`, "…"},
		{"256 bytes exact", `{"` + strings.Repeat("k", 250) + `": {"abcde": "NO6JO3"}}`,
			strings.Repeat("k", 250) + ".abcde"},
		{"257 bytes cut", `{"` + strings.Repeat("k", 250) + `": {"abcdef": "NO6JO3"}}`,
			strings.Repeat("k", 250) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := checkSane(t, hostileArgs(tc.args))
			d := decisionAt(t, r, 1, 0)
			if len(d.Args) != 1 || d.Args[0].Path != tc.want {
				var paths []string
				for _, a := range d.Args {
					paths = append(paths, a.Path)
				}
				t.Fatalf("paths %q, want [%q]", paths, tc.want)
			}
			if len(d.Args[0].Path) > maxPathBytes+len(pathCut) {
				t.Errorf("path of %d bytes", len(d.Args[0].Path))
			}
		})
	}
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestHostileManyLeavesDeep: the same values cost about the same to check
// whether they sit 1 or 5,000 levels deep, in a tool answer or in a call's
// arguments (string-encoded, as OpenAI logs write them, through the
// importer). Before paths were cut, 150,000 numbers under 5,000 levels of
// {"a": took 30 s and 7.4 GB in an answer, and over 23 GB in arguments.
func TestHostileManyLeavesDeep(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates some hundreds of MB")
	}
	const leaves, depth = 60000, 5000
	inner := manyNumbers(leaves)
	for _, where := range []string{"answer", "arguments"} {
		build := func(levels int) *Trajectory {
			doc := deepNest(`{"a":`, inner, "}", levels)
			if where == "answer" {
				return hostileObs(doc)
			}
			quoted, _ := json.Marshal(doc)
			line := `{"id":"h","messages":[{"role":"user","content":"Hi, I am mia_li_3668."},` +
				`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_user_details","arguments":` +
				string(quoted) + `}}]},{"role":"tool","tool_call_id":"c1","content":"ok"},{"role":"assistant","content":"Done."}]}`
			for tr, err := range Read(strings.NewReader(line), "h.jsonl", FormatAuto) {
				if err != nil {
					t.Fatal(err)
				}
				if len(tr.Messages[1].ToolCalls) != 1 || len(tr.Messages[1].ToolCalls[0].Arguments) == 0 {
					t.Fatal("string-encoded arguments not read as JSON")
				}
				return tr
			}
			t.Fatal("no trajectory")
			return nil
		}
		shallowT, deepT := build(1), build(depth)
		size := len(inner) + depth*6
		checkSane(t, deepT) // warm the pools
		shallow := allocated(func() { checkSane(t, shallowT) })
		deep := allocated(func() { checkSane(t, deepT) })
		t.Logf("%s: %d numbers, %d bytes: %d MB at depth 1, %d MB at depth %d", where, leaves, size, shallow>>20, deep>>20, depth)
		// Bounded per leaf: depth may add at most what the cut paths hold
		// (259 bytes per leaf, twice) over the shallow cost.
		if limit := 2*shallow + uint64(leaves*2*(maxPathBytes+len(pathCut))) + 16<<20; deep > limit {
			t.Errorf("%s: %d MB checking %d numbers %d levels deep, want at most %d MB (%d MB at depth 1)",
				where, deep>>20, leaves, depth, limit>>20, shallow>>20)
		}
	}
}

// BenchmarkCheckHostileDeep checks a tool answer of 100,000 numbers under
// 5,000 levels of {"a": (about 320 KB).
func BenchmarkCheckHostileDeep(b *testing.B) {
	tr := hostileObs(deepNest(`{"a":`, manyNumbers(100000), "}", 5000))
	b.ReportAllocs()
	for b.Loop() {
		Check(tr, nil)
	}
}

// TestHostileToolSchema: a tool list from the log with a deeply nested or
// huge parameters schema is not compiled (compiling cost grows with the
// cube of the nesting: 1,000 levels allocated 9 GB); one within the bounds
// still is, and still judges the call.
func TestHostileToolSchema(t *testing.T) {
	nested := func(levels int, leaf string) string {
		return deepNest(`{"type":"object","properties":{"a":`, leaf, "}}", levels)
	}
	if ts := compileToolSchema(json.RawMessage(nested(31, `{"type":"string","enum":["x"]}`))); ts.err != nil {
		t.Fatalf("31 levels (62 deep) not compiled: %v", ts.err)
	} else if ts.validate(json.RawMessage(deepNest(`{"a":`, `"y"`, "}", 31))) == "" {
		t.Error("31 levels: a value outside the enum 31 levels down passes validation")
	}
	ok := compileToolSchema(json.RawMessage(`{"type":"object","properties":{"cabin":{"type":"string","enum":["economy"]}}}`))
	if ok.err != nil || ok.validate(json.RawMessage(`{"cabin":"first"}`)) == "" {
		t.Fatalf("a plain schema no longer validates (err %v)", ok.err)
	}
	var sib strings.Builder
	for i := 0; sib.Len() <= maxSchemaBytes; i++ {
		fmt.Fprintf(&sib, `"p%d":{"type":"string"},`, i)
	}
	for _, tc := range []struct{ name, schema string }{
		{"2,000 levels", nested(2000, `{"type":"string"}`)},
		{"over 256 KiB", `{"type":"object","properties":{` + sib.String() + `"a":{"type":"string"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if ts := compileToolSchema(json.RawMessage(tc.schema)); ts.err == nil {
				t.Errorf("compiled")
			}
			tr := traj("airline").tool("get_user_details", tc.schema).
				user("Hi, I am mia_li_3668.").
				call("get_user_details", `{"user_id": "mia_li_3668"}`, "ok").say("Done.").build()
			if n := allocated(func() { checkSane(t, tr) }); n > 64<<20 {
				t.Errorf("checking allocated %d MB", n>>20)
			}
		})
	}
}

// manyReservations is an airline trajectory that reads n reservations, none
// of which the policy lets the user cancel, and tells the user after each
// that it is "eligible for a full refund"; the user named them all first.
func manyReservations(n int) *Trajectory {
	var ids strings.Builder
	for i := range n {
		fmt.Fprintf(&ids, " R%05d", i)
	}
	b := traj("airline").sys(airlinePolicy).user("Hi, I am mia_li_3668 and I want to cancel my reservations" + ids.String() + ".")
	for i := range n {
		id := fmt.Sprintf("R%05d", i)
		b.call("get_reservation_details", `{"reservation_id": "`+id+`"}`,
			`{"reservation_id": "`+id+`", "user_id": "mia_li_3668", "cabin": "economy", "flights": [{"flight_number": "HAT136", "date": "2024-05-20"}], "created_at": "2024-05-01T09:00:00", "insurance": "no"}`)
		b.say("Reservation " + id + " is eligible for a full refund.").user("ok thanks")
	}
	return b.build()
}

// TestPolicyClaimsManyRecords: with more reservations read than the name
// searches try one by one, a reply's claim is still checked against the
// record of the reservation it names.
func TestPolicyClaimsManyRecords(t *testing.T) {
	tr := manyReservations(3 * fewIDs)
	r := Check(tr, nil)
	for _, msg := range []int{4, 4 + 4*fewIDs, len(tr.Messages) - 2} {
		d := decisionAt(t, r, msg, -1)
		id := fmt.Sprintf("R%05d", (msg-4)/4)
		if d.Verdict != VerdictAmbiguous {
			t.Errorf("message %d (%s eligible for a refund, booked 14 days ago, economy, no insurance): %s, want ambiguous", msg, id, describeDecision(d))
			continue
		}
		found := false
		for _, a := range d.Args {
			found = found || strings.Contains(a.Where.Note, "record of "+id)
		}
		if !found {
			t.Errorf("message %d: no evidence names the record of %s: %s", msg, id, describeDecision(d))
		}
	}
}

// TestNamedIDsLookupAgrees: past fewIDs, allNamed and lastNamed look each
// window of the text up instead of searching for every id; they must find
// the same ids, overlapping and nested ones included.
func TestNamedIDsLookupAgrees(t *testing.T) {
	naiveAll := func(text string, ids map[string]bool) []string {
		var out []string
		for id := range ids {
			if strings.Contains(text, id) {
				out = append(out, id)
			}
		}
		slices.Sort(out)
		return out
	}
	naiveLast := func(text string, ids map[string]bool) string {
		best, at := "", -1
		for id := range ids {
			if k := strings.LastIndex(text, id); k > at || (k == at && k >= 0 && id < best) {
				best, at = id, k
			}
		}
		return best
	}
	x := &recordIndex{ids: map[string]bool{}}
	add := func(id string) {
		x.ids[id] = true
		if !slices.Contains(x.lens, len(id)) {
			x.lens = append(x.lens, len(id))
		}
	}
	var ids []string
	for i := range 3 * fewIDs {
		id := fmt.Sprintf("AB%04d", i)
		ids = append(ids, id, id+"XY") // nested: AB0001 inside AB0001XY
		add(id + "XY")                 // the longer length first: ties go to the smaller id
		add(id)
	}
	rng := rand.New(rand.NewPCG(20261204, 1))
	for range 2000 {
		var sb strings.Builder
		for range rng.IntN(6) {
			sb.WriteString([]string{" reservation ", ", ", "AB", "X", " and "}[rng.IntN(5)])
			if rng.IntN(2) == 0 {
				sb.WriteString(ids[rng.IntN(len(ids))])
			}
		}
		text := sb.String()
		if got, want := allNamed(text, x), naiveAll(text, x.ids); !slices.Equal(got, want) {
			t.Fatalf("allNamed(%q) = %v, want %v", text, got, want)
		}
		if got, want := lastNamed(text, x), naiveLast(text, x.ids); got != want {
			t.Fatalf("lastNamed(%q) = %q, want %q", text, got, want)
		}
	}
}

// BenchmarkCheckPolicyManyRecords: the policy rules' cost per decision
// stays flat as a trajectory reads more records (it grew with their number
// before: 4,000 reservations took 3.95 s, 8,000 took 14.75 s).
func BenchmarkCheckPolicyManyRecords(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		tr := manyReservations(n)
		b.Run(fmt.Sprintf("reservations=%d", n), func(b *testing.B) {
			var decisions int
			for b.Loop() {
				decisions = len(Check(tr, nil).Decisions)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*decisions), "ns/decision")
		})
	}
}

// TestReportSearchBound: a report line after a write is supported by a
// word of an earlier tool result ("Cabin: economy"); once the trajectory's
// searches have read their limit the word is not looked for, and the line
// goes to a human saying why rather than passing unread.
func TestReportSearchBound(t *testing.T) {
	tr := cancelled().say("Done! Here is the summary:\n- **Status:** cancelled\n- **Cabin:** economy").build()
	if d := decisionAt(t, Check(tr, nil), 8, -1); d.Verdict != VerdictPass {
		t.Fatalf("with the whole history searched: %s, want pass", describeDecision(d))
	}
	defer func(n int) { maxReportSearch = n }(maxReportSearch)
	maxReportSearch = 10
	d := decisionAt(t, Check(tr, nil), 8, -1)
	a, ok := argAt(d, "content[51:71]")
	if d.Verdict != VerdictAmbiguous || !ok || !strings.Contains(a.Where.String(), "not all searched") {
		t.Errorf("with the search limit spent: %s, want ambiguous, its evidence saying the search stopped", describeDecision(d))
	}
}

// BenchmarkCheckManyReports: a reply after each of n writes reports 50
// "Label: word" lines whose words no result holds; each word was searched
// for through every earlier tool result (1.29 s for 1,000 writes, 3.89 s
// for 2,000 with groundwork check), now within a budget per trajectory
// (0.37 s and 0.77 s).
func BenchmarkCheckManyReports(b *testing.B) {
	for _, n := range []int{500, 2000} {
		bld := traj("airline").sys(airlinePolicy).user("I am mia_li_3668, add bags to NO6JO3. yes")
		for i := range n {
			bld.call("update_reservation_baggages", `{"reservation_id":"NO6JO3","total_baggages":1,"nonfree_baggages":0,"payment_id":"credit_card_1"}`,
				`{"reservation_id":"NO6JO3","total_baggages":1,"note":"`+strings.Repeat("x", 200)+`"}`)
			var lines []string
			for k := range 50 {
				lines = append(lines, "Seat: zq"+strings.Map(func(r rune) rune { return 'a' + (r-'0')%26 }, strconv.Itoa(i*50+k)))
			}
			bld.say(strings.Join(lines, "\n")).user("yes")
		}
		tr := bld.build()
		b.Run(fmt.Sprintf("writes=%d", n), func(b *testing.B) {
			var decisions int
			for b.Loop() {
				decisions = len(Check(tr, nil).Decisions)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*decisions), "ns/decision")
		})
	}
}

// BenchmarkCheckManyTurns: n user turns, each followed by a search whose
// values nobody gave. Each value was looked for in every earlier user
// message, as a relative date and as an airport's city (2,000 turns 0.83 s,
// 4,000 3.02 s, 8,000 9.69 s with groundwork check); each message is now
// read once per phrase (0.11 s, 0.15 s, 0.27 s).
func BenchmarkCheckManyTurns(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		bld := traj("airline").sys(airlinePolicy)
		for range n {
			bld.user("please look again").call("search_direct_flight", `{"origin":"JFK","destination":"SEA","date":"2024-05-20"}`, "[]")
		}
		tr := bld.build()
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			var decisions int
			for b.Loop() {
				decisions = len(Check(tr, nil).Decisions)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*decisions), "ns/decision")
		})
	}
}
