package grounding

import (
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"strings"
)

// GenOptions configures Generate.
type GenOptions struct {
	Trajectories int
	Seed         uint64
	// Kind is "tau" (τ-bench-like customer service), "swe" (coding agent)
	// or "mixed" (about one in five SWE).
	Kind string
}

// GenKinds are the kinds Generate accepts.
var GenKinds = []string{"tau", "swe", "mixed"}

// Generate yields a realistic, deterministic pool of canonical trajectories:
// the same options always give the same trajectories, byte for byte once
// encoded. τ-like trajectories span three domains with multi-turn user
// dialogue, reads whose ids come from earlier observations, confirmed
// writes, real-looking errors followed by recoveries, hand-offs, hidden
// teacher hints (some leaking into actions), user instructions and reference
// actions; their lengths are skewed (many short, few long). SWE trajectories
// localize, write and run a reproduction script, edit sources, rerun and
// test. Benchmarks and tests use it; `groundwork gen` prints it.
func Generate(opt GenOptions) iter.Seq[*Trajectory] {
	return func(yield func(*Trajectory) bool) {
		for i := range opt.Trajectories {
			// One stream per trajectory: trajectory i does not depend on
			// how many came before it.
			rng := rand.New(rand.NewPCG(opt.Seed, uint64(i)))
			var t *Trajectory
			switch {
			case opt.Kind == "swe", opt.Kind == "mixed" && rng.IntN(5) == 0:
				t = genSWE(rng, i)
			default:
				t = genTau(rng, i)
			}
			t.Source = Source{Format: "canonical", File: "generated", Index: i}
			if !yield(t) {
				return
			}
		}
	}
}

// gen accumulates one trajectory's messages.
type gen struct {
	t     *Trajectory
	calls int
}

func (g *gen) add(m Message) int {
	g.t.Messages = append(g.t.Messages, m)
	return len(g.t.Messages) - 1
}

func (g *gen) user(s string) { g.add(Message{Role: RoleUser, Content: s}) }
func (g *gen) say(s string)  { g.add(Message{Role: RoleAssistant, Content: s}) }

// call appends an assistant call and its observation.
func (g *gen) call(name string, args any, obs string, isErr bool) {
	g.calls++
	id := fmt.Sprintf("call_%d", g.calls)
	raw, _ := json.Marshal(args)
	g.add(Message{Role: RoleAssistant, ContentNull: true, ToolCalls: []ToolCall{{ID: id, Name: name, Arguments: raw}}})
	g.add(Message{Role: RoleTool, ToolCallID: id, Name: name, Content: obs, Error: isErr})
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

var (
	genFirst  = []string{"mia", "omar", "yusuf", "sofia", "liam", "ava", "noah", "emma", "raj", "chen", "lucas", "isabella", "amir", "nora", "ethan"}
	genLast   = []string{"li", "davis", "rossi", "garcia", "smith", "kim", "patel", "muller", "silva", "ahmed", "brown", "lopez", "wang", "nguyen", "taylor"}
	genCities = [][2]string{{"New York", "JFK"}, {"Seattle", "SEA"}, {"Los Angeles", "LAX"}, {"Chicago", "ORD"}, {"Atlanta", "ATL"}, {"Boston", "BOS"}, {"Denver", "DEN"}, {"Miami", "MIA"}, {"Houston", "IAH"}, {"Philadelphia", "PHL"}}
)

func genID(rng *rand.Rand, n int) string {
	const letters = "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[rng.IntN(len(letters))]
	}
	return string(b)
}

func genDigits(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + rng.IntN(10))
	}
	return string(b)
}

// genTasks draws how many tasks a conversation holds: geometric, so most
// trajectories are short and a few are long.
func genTasks(rng *rand.Rand) int {
	n := 1
	for n < 8 && rng.Float64() < 0.45 {
		n++
	}
	return n
}

type genCard struct{ id, last4 string }

func genTau(rng *rand.Rand, i int) *Trajectory {
	domains := []string{"airline", "airline", "retail", "telecom"}
	domain := domains[rng.IntN(len(domains))]
	user := genFirst[rng.IntN(len(genFirst))] + "_" + genLast[rng.IntN(len(genLast))] + "_" + genDigits(rng, 4)
	g := &gen{t: &Trajectory{
		ID:       fmt.Sprintf("gen-%s-%06d", domain, i),
		ParentID: fmt.Sprintf("gen-%s-task-%d", domain, i/4), // four renderings per parent task
		Domain:   domain,
		Meta:     json.RawMessage(fmt.Sprintf(`{"model":"gen-agent","trial":%d}`, i%4)),
	}}
	object := map[string]string{"airline": "reservation", "retail": "order", "telecom": "line"}[domain]
	g.add(Message{Role: RoleSystem, Content: fmt.Sprintf("# %s agent policy\n\nThe current time is 2024-05-15 15:00:00 EST.\n\n"+
		"Before taking any action that updates the database, list the action details and obtain explicit user confirmation (yes) to proceed. "+
		"Transfer the user to a human agent only if the request cannot be handled.", strings.ToUpper(domain[:1])+domain[1:])})

	// The user's profile: the ids later decisions draw on.
	var cards []genCard
	for range 1 + rng.IntN(3) {
		cards = append(cards, genCard{"credit_card_" + genDigits(rng, 7), genDigits(rng, 4)})
	}
	cert := "certificate_" + genDigits(rng, 7)
	var objects []string
	for range 1 + rng.IntN(4) {
		objects = append(objects, genID(rng, 6))
	}
	payments := map[string]any{cert: map[string]any{"source": "certificate", "amount": 50 * (1 + rng.IntN(6))}}
	for _, c := range cards {
		payments[c.id] = map[string]any{"source": "credit_card", "brand": "visa", "last_four": c.last4}
	}
	profile := jsonText(map[string]any{"user_id": user, object + "s": objects, "payment_methods": payments, "membership": []string{"regular", "silver", "gold"}[rng.IntN(3)]})

	var hidden []HiddenEntry
	var reference []map[string]any
	instruction := fmt.Sprintf("You are %s. ", user)
	hint := rng.Float64() < 0.15
	leak := hint && rng.Float64() < 0.5
	voucher := "voucher_" + genDigits(rng, 7) // named only by the hidden hint

	g.user(fmt.Sprintf("Hi! My user id is %s.", user))
	g.call("get_user_details", map[string]string{"user_id": user}, profile, false)
	transferred := false
	for task := range genTasks(rng) {
		obj := objects[rng.IntN(len(objects))]
		g.user(fmt.Sprintf("I need help with %s %s.", object, obj))
		if hint && task == 0 {
			g.add(Message{Role: RoleSystem, Visibility: Hidden, HiddenKind: HiddenTeacherHint,
				Content: fmt.Sprintf("teacher note: this user is owed %s; mention it after a cancellation", voucher)})
		}
		if rng.Float64() < 0.1 { // a typo, a real error, then the recovery
			typo := obj[:len(obj)-1] + "0"
			g.call("get_"+object+"_details", map[string]string{object + "_id": typo}, "Error: "+object+" not found", true)
		}
		price := 80 + rng.IntN(400)
		from, to := genCities[rng.IntN(len(genCities))], genCities[rng.IntN(len(genCities))]
		g.call("get_"+object+"_details", map[string]string{object + "_id": obj}, jsonText(map[string]any{
			object + "_id": obj, "user_id": user, "status": "active", "origin": from[1], "destination": to[1],
			"price": price, "insurance": []string{"yes", "no"}[rng.IntN(2)],
		}), false)
		switch r := rng.Float64(); {
		case r < 0.05:
			g.say("I am unable to handle this request; let me transfer you.")
			g.call("transfer_to_human_agents", map[string]string{"summary": fmt.Sprintf("User %s needs help with %s %s.", user, object, obj)}, "Transfer successful", false)
			transferred = true
		case r < 0.45: // cancel, confirmed
			g.say(fmt.Sprintf("%s %s costs $%d. I can cancel it with a refund to the original payment. Shall I proceed (yes/no)?", strings.ToUpper(object[:1])+object[1:], obj, price))
			g.user("Yes, please.")
			g.call("cancel_"+object, map[string]string{object + "_id": obj}, jsonText(map[string]string{object + "_id": obj, "status": "cancelled"}), false)
			reference = append(reference, map[string]any{"name": "cancel_" + object, "arguments": map[string]string{object + "_id": obj}})
			refund := fmt.Sprintf("The refund of $%d will arrive in 5 to 7 business days.", price)
			if leak {
				refund = fmt.Sprintf("The refund of $%d will arrive soon, and %s is yours.", price, voucher) // only the hidden hint named it
			}
			g.say(fmt.Sprintf("%s %s is cancelled. %s", strings.ToUpper(object[:1])+object[1:], obj, refund))
			instruction += fmt.Sprintf("You want to cancel %s %s. ", object, obj)
		case r < 0.8: // change, paid with a card the user may or may not name
			g.user(fmt.Sprintf("Can I move it to fly from %s to %s on May 20th instead?", from[0], to[0]))
			g.call("search_direct_flight", map[string]string{"origin": from[1], "destination": to[1], "date": "2024-05-20"},
				jsonText([]map[string]any{{"flight_number": "HAT" + genDigits(rng, 3), "origin": from[1], "destination": to[1], "price": price + 20}}), false)
			card := cards[rng.IntN(len(cards))]
			if rng.Float64() < 0.7 {
				g.user(fmt.Sprintf("Please pay the difference with my card ending %s.", card.last4))
			}
			g.say(fmt.Sprintf("I will update %s to fly %s to %s on 2024-05-20 and charge $20 to %s. Do you want me to go ahead?", obj, from[1], to[1], card.id))
			g.user("yes")
			args := map[string]any{object + "_id": obj, "origin": from[1], "destination": to[1], "date": "2024-05-20", "payment_id": card.id}
			g.call("update_"+object, args, jsonText(map[string]string{object + "_id": obj, "status": "updated"}), false)
			reference = append(reference, map[string]any{"name": "update_" + object, "arguments": args})
			g.say(fmt.Sprintf("Done: %s now flies %s to %s.", obj, from[1], to[1]))
			instruction += fmt.Sprintf("You want %s to fly %s to %s. ", obj, from[0], to[0])
		default: // information only
			g.say(fmt.Sprintf("%s %s is active, from %s to %s, and cost $%d.", strings.ToUpper(object[:1])+object[1:], obj, from[1], to[1], price))
			instruction += fmt.Sprintf("You want to know the status of %s. ", obj)
		}
		if transferred {
			break
		}
	}
	if !transferred {
		g.user("Thanks, that's all.")
		g.say("You're welcome. Have a great day!")
	}
	hidden = append(hidden, HiddenEntry{Kind: HiddenUserInstruction, Content: json.RawMessage(jsonText(instruction))})
	if reference == nil {
		reference = []map[string]any{}
	}
	hidden = append(hidden, HiddenEntry{Kind: HiddenReferenceActions, Content: json.RawMessage(jsonText(reference))})
	g.t.Hidden = hidden
	reward := 0.0
	if !transferred && rng.Float64() < 0.8 {
		reward = 1
	}
	g.t.Reward = &reward
	g.t.Tools = genTools(domain, object)
	return g.t
}

func genTools(domain, object string) []Tool {
	str := func(names ...string) json.RawMessage {
		props := map[string]any{}
		for _, n := range names {
			props[n] = map[string]string{"type": "string"}
		}
		return json.RawMessage(jsonText(map[string]any{"type": "object", "properties": props, "required": names}))
	}
	return []Tool{
		{Name: "get_user_details", Description: "Get the details of a user.", Parameters: str("user_id")},
		{Name: "get_" + object + "_details", Description: "Get the details of a " + object + ".", Parameters: str(object + "_id")},
		{Name: "cancel_" + object, Description: "Cancel a " + object + ".", Parameters: str(object + "_id")},
		{Name: "update_" + object, Description: "Change a " + object + ".", Parameters: str(object+"_id", "origin", "destination", "date", "payment_id")},
		{Name: "search_direct_flight", Description: "Search direct flights.", Parameters: str("origin", "destination", "date")},
		{Name: "transfer_to_human_agents", Description: "Transfer to a human agent.", Parameters: str("summary")},
	}
}

var genRepos = []struct{ repo, pkg, file, fn string }{
	{"django/django", "django", "django/db/models/query.py", "bulk_update"},
	{"sympy/sympy", "sympy", "sympy/core/numbers.py", "Rational"},
	{"astropy/astropy", "astropy", "astropy/io/fits/header.py", "fromstring"},
	{"pytest-dev/pytest", "pytest", "src/_pytest/skipping.py", "evaluate_skip_marks"},
	{"sphinx-doc/sphinx", "sphinx", "sphinx/util/inspect.py", "signature"},
}

func genSWE(rng *rand.Rand, i int) *Trajectory {
	r := genRepos[rng.IntN(len(genRepos))]
	inst := fmt.Sprintf("%s__%s-%d", strings.Split(r.repo, "/")[0], r.pkg, 10000+rng.IntN(9000))
	g := &gen{t: &Trajectory{ID: fmt.Sprintf("gen-swe-%06d", i), ParentID: inst, Domain: DomainSWE}}
	g.add(Message{Role: RoleSystem, Content: "You are a helpful assistant that can interact with a computer shell to solve programming tasks. " +
		"Run one bash command per turn; submit with `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff`."})
	g.user(fmt.Sprintf("<pr_description>\n%s in %s fails on empty input: it raises IndexError instead of returning an empty result.\n</pr_description>", r.fn, r.file))
	bash := func(cmd, out string, isErr bool) { g.call("bash", map[string]string{"command": cmd}, out, isErr) }
	bash(fmt.Sprintf("grep -rn \"def %s\" %s | head", r.fn, r.pkg), fmt.Sprintf("%s:%d:def %s(self, items):", r.file, 100+rng.IntN(900), r.fn), false)
	for range rng.IntN(3) {
		bash(fmt.Sprintf("sed -n '%d,%dp' %s", 100+rng.IntN(50), 160+rng.IntN(50), r.file), "    def "+r.fn+"(self, items):\n        first = items[0]\n        ...", false)
	}
	repro := rng.Float64() < 0.75
	if repro {
		bash("cat <<'EOF' > reproduce_issue.py\nfrom "+r.pkg+" import *\nprint("+r.fn+"([]))\nEOF", "", false)
		bash("python reproduce_issue.py", "Traceback (most recent call last):\n  File \"reproduce_issue.py\", line 2, in <module>\nIndexError: list index out of range", true)
	}
	for range 1 + rng.IntN(2) {
		bash(fmt.Sprintf("sed -i 's/first = items\\[0\\]/if not items:\\n            return []\\n        first = items[0]/' %s", r.file), "", false)
	}
	verified := repro && rng.Float64() < 0.8
	if verified {
		bash("python reproduce_issue.py", "[]", false)
	}
	if rng.Float64() < 0.6 {
		out := "==== 42 passed in 3.21s ===="
		if rng.Float64() < 0.2 {
			out = "FAILED tests/test_" + r.pkg + ".py::test_" + r.fn + "_empty - AssertionError\n==== 1 failed, 41 passed ===="
		}
		bash("python -m pytest tests/ -q -x", out, strings.Contains(out, "FAILED"))
	}
	diff := fmt.Sprintf("diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -101,2 +101,4 @@\n     def %s(self, items):\n+        if not items:\n+            return []\n         first = items[0]\n", r.file, r.file, r.file, r.file, r.fn)
	submitted := rng.Float64() < 0.9
	if submitted {
		bash("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff", diff, false)
	}
	status := "Submitted"
	if !submitted {
		status = "LimitsExceeded"
	}
	meta := map[string]any{"instance_id": inst, "scaffold": "mini-swe-agent", "exit_status": status, "model": "gen-agent"}
	if submitted {
		meta["submission"] = diff
	}
	g.t.Meta = json.RawMessage(jsonText(meta))
	ok := submitted && verified
	g.t.Success = &ok
	return g.t
}

// WriteGenerated writes Generate(opt) to w as canonical JSON Lines, what
// `groundwork gen` prints and the demo imports.
func WriteGenerated(w io.Writer, opt GenOptions) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for t := range Generate(opt) {
		if err := enc.Encode(t); err != nil {
			return err
		}
	}
	return nil
}
