package grounding

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// lcg is a tiny deterministic generator for test pools (STYLE §7: no
// randomness in tests; a fixed-seed sequence is reproducible).
type lcg uint64

func (g *lcg) next() uint64 {
	*g = *g*6364136223846793005 + 1442695040888963407
	return uint64(*g >> 33)
}

func (g *lcg) intn(n int) int { return int(g.next() % uint64(n)) }

func (g *lcg) pick(xs []string) string { return xs[g.intn(len(xs))] }

// benchPolicy is a τ-bench-like airline policy: long prose with a few
// numbers and the current time, as every real log's system message.
var benchPolicy = func() string {
	var b strings.Builder
	b.WriteString("# Airline Agent Policy\n\nThe current time is 2024-05-15 15:00:00 EST.\n\n")
	paras := []string{
		"As an airline agent, you can help users book, modify, or cancel flight reservations.",
		"Before taking any actions that update the booking database (booking, modifying flights, editing baggage, upgrading cabin class, or updating passenger information), you must list the action details and obtain explicit user confirmation (yes) to proceed.",
		"You should not provide any information, knowledge, or procedures not provided by the user or available tools, or give subjective recommendations or comments.",
		"Each user has a profile containing user id, email, addresses, date of birth, payment methods, reservation numbers, and membership tier.",
		"Each reservation can have at most five passengers. Each reservation can use at most one travel certificate, at most one credit card, and at most three gift cards.",
		"If the booking user is a regular member, 0 free checked bag for each basic economy passenger, 1 free checked bag for each economy passenger, and 2 free checked bags for each business passenger. Each extra baggage is 50 dollars.",
		"Travel insurance is 30 dollars per passenger and enables full refund if the user needs to cancel the flight given health or weather reasons.",
		"All reservations can be cancelled within 24 hours of booking, or if the airline cancelled the flight. Otherwise, basic economy or economy flights can be cancelled only if travel insurance is bought and the condition is met.",
		"The refund will go to original payment methods in 5 to 7 business days.",
	}
	for i := 0; i < 4; i++ {
		for _, p := range paras {
			b.WriteString("- ")
			b.WriteString(p)
			b.WriteString("\n\n")
		}
	}
	return b.String()
}()

var benchAirports = []string{"JFK", "SEA", "LAX", "ORD", "DFW", "DEN", "ATL", "MIA", "BOS", "PHX", "IAH", "LAS", "MCO", "EWR", "SFO"}

// benchTrajectory builds one τ-bench-like trajectory: identify the user,
// read reservations, search flights, compute a price, confirm and update.
func benchTrajectory(g *lcg, i int) *Trajectory {
	uid := fmt.Sprintf("user_%c%c_%04d", 'a'+g.intn(26), 'a'+g.intn(26), g.intn(10000))
	type pay struct {
		id, source string
		last4      string
		amount     int
	}
	pays := []pay{
		{fmt.Sprintf("credit_card_%07d", g.intn(9999999)), "credit_card", fmt.Sprintf("%04d", g.intn(10000)), 0},
		{fmt.Sprintf("credit_card_%07d", g.intn(9999999)), "credit_card", fmt.Sprintf("%04d", g.intn(10000)), 0},
		{fmt.Sprintf("gift_card_%07d", g.intn(9999999)), "gift_card", "", 50 + g.intn(300)},
		{fmt.Sprintf("certificate_%07d", g.intn(9999999)), "certificate", "", 100 + 50*g.intn(5)},
	}
	var res []string
	for k := 0; k < 5; k++ {
		res = append(res, fmt.Sprintf("%c%c%d%c%c%d", 'A'+g.intn(26), 'A'+g.intn(26), g.intn(10), 'A'+g.intn(26), 'A'+g.intn(26), g.intn(10)))
	}
	pm := map[string]any{}
	for _, p := range pays {
		m := map[string]any{"source": p.source, "id": p.id}
		if p.last4 != "" {
			m["brand"] = "visa"
			m["last_four"] = p.last4
		} else {
			m["amount"] = p.amount
		}
		pm[p.id] = m
	}
	details, _ := json.Marshal(map[string]any{
		"name":            map[string]string{"first_name": "Ava", "last_name": "Lee"},
		"address":         map[string]string{"address1": fmt.Sprintf("%d Pine Lane", 100+g.intn(900)), "city": "Austin", "zip": fmt.Sprintf("%05d", g.intn(99999))},
		"email":           uid + "@example.com",
		"dob":             fmt.Sprintf("19%02d-%02d-%02d", 50+g.intn(49), 1+g.intn(12), 1+g.intn(28)),
		"payment_methods": pm,
		"membership":      "silver",
		"reservations":    res,
	})
	origin, dest := g.pick(benchAirports), g.pick(benchAirports)
	day := 16 + g.intn(14)
	date := fmt.Sprintf("2024-05-%02d", day)
	var reads []Message
	var msgs []Message
	add := func(m Message) { msgs = append(msgs, m) }
	callID := 0
	call := func(name string, args any) (Message, string) {
		callID++
		id := fmt.Sprintf("call_%d", callID)
		b, _ := json.Marshal(args)
		return Message{Role: RoleAssistant, ContentNull: true, ToolCalls: []ToolCall{{ID: id, Name: name, Arguments: b}}}, id
	}
	tool := func(id, name, content string) Message {
		return Message{Role: RoleTool, ToolCallID: id, Name: name, Content: content, Error: strings.HasPrefix(content, "Error:")}
	}
	add(Message{Role: RoleSystem, Content: benchPolicy})
	add(Message{Role: RoleUser, Content: "Hi! I need to change the flights of one of my reservations. My user id is " + uid + "."})
	m, id := call("get_user_details", map[string]string{"user_id": uid})
	add(m)
	add(tool(id, "get_user_details", string(details)))
	target := res[g.intn(len(res))]
	var flights []map[string]any
	for k := 0; k < 3; k++ {
		r := res[k]
		if k == 2 {
			r = target
		}
		m, id := call("get_reservation_details", map[string]string{"reservation_id": r})
		add(m)
		fl := []map[string]any{
			{"origin": origin, "destination": "ORD", "flight_number": fmt.Sprintf("HAT%03d", g.intn(300)), "date": date, "price": 100 + g.intn(400)},
			{"origin": "ORD", "destination": dest, "flight_number": fmt.Sprintf("HAT%03d", g.intn(300)), "date": date, "price": 100 + g.intn(400)},
		}
		if r == target {
			flights = fl
		}
		b, _ := json.Marshal(map[string]any{"reservation_id": r, "user_id": uid, "origin": origin, "destination": dest,
			"flight_type": "one_way", "cabin": "economy", "flights": fl,
			"passengers":      []map[string]string{{"first_name": "Ava", "last_name": "Lee", "dob": "1980-01-02"}},
			"payment_history": []map[string]any{{"payment_id": pays[0].id, "amount": 500 + g.intn(500)}},
			"created_at":      "2024-05-0" + fmt.Sprint(1+g.intn(9)) + "T10:00:00", "total_baggages": g.intn(3), "nonfree_baggages": 0, "insurance": "no"})
		reads = append(reads, tool(id, "get_reservation_details", string(b)))
		add(reads[len(reads)-1])
	}
	add(Message{Role: RoleAssistant, Content: fmt.Sprintf("I found reservation %s from %s to %s on %s with flights %s and %s. Which flight would you like instead?",
		target, origin, dest, date, flights[0]["flight_number"], flights[1]["flight_number"])})
	add(Message{Role: RoleUser, Content: fmt.Sprintf("I'd like a direct flight from %s to %s on May %d, please.", origin, dest, day)})
	m, id = call("search_direct_flight", map[string]string{"origin": origin, "destination": dest, "date": date})
	add(m)
	var opts []map[string]any
	for k := 0; k < 4; k++ {
		opts = append(opts, map[string]any{"flight_number": fmt.Sprintf("HAT%03d", g.intn(300)), "origin": origin, "destination": dest,
			"scheduled_departure_time_est": fmt.Sprintf("%02d:00:00", g.intn(24)), "scheduled_arrival_time_est": fmt.Sprintf("%02d:30:00", g.intn(24)),
			"status": "available", "available_seats": map[string]int{"basic_economy": g.intn(20), "economy": g.intn(20), "business": g.intn(20)},
			"prices": map[string]int{"basic_economy": 50 + g.intn(100), "economy": 100 + g.intn(200), "business": 300 + g.intn(400)}})
	}
	b, _ := json.Marshal(opts)
	add(tool(id, "search_direct_flight", string(b)))
	chosen := opts[g.intn(len(opts))]
	price := chosen["prices"].(map[string]int)["economy"]
	add(Message{Role: RoleAssistant, Content: fmt.Sprintf("Flight %s departs at %s and costs $%d in economy. Shall I look at the fare difference?", chosen["flight_number"], chosen["scheduled_departure_time_est"], price)})
	add(Message{Role: RoleUser, Content: fmt.Sprintf("Yes, I'll take %s. Please charge my card ending in %s.", chosen["flight_number"], pays[1].last4)})
	m, id = call("calculate", map[string]string{"expression": fmt.Sprintf("%d - %d", price, flights[0]["price"])})
	add(m)
	add(tool(id, "calculate", fmt.Sprintf("%d.0", price-flights[0]["price"].(int))))
	add(Message{Role: RoleAssistant, Content: fmt.Sprintf("To confirm: reservation %s will fly %s on %s in economy, paid with credit_card ending %s. Do you want me to proceed?", target, chosen["flight_number"], date, pays[1].last4)})
	add(Message{Role: RoleUser, Content: "Yes, please proceed."})
	m, id = call("update_reservation_flights", map[string]any{"reservation_id": target, "cabin": "economy",
		"flights":    []map[string]any{{"flight_number": chosen["flight_number"], "date": date}},
		"payment_id": pays[1].id})
	add(m)
	b, _ = json.Marshal(map[string]any{"reservation_id": target, "user_id": uid, "cabin": "economy",
		"flights": []map[string]any{{"flight_number": chosen["flight_number"], "date": date, "price": price}}})
	add(tool(id, "update_reservation_flights", string(b)))
	add(Message{Role: RoleAssistant, Content: fmt.Sprintf("Your reservation %s has been updated to flight %s on %s.", target, chosen["flight_number"], date)})
	add(Message{Role: RoleUser, Content: "Thanks! ###STOP###"})
	reward := 1.0
	instr, _ := json.Marshal("You are " + uid + ". Change reservation " + target + ".")
	return &Trajectory{ID: fmt.Sprintf("bench-%d", i), Domain: "airline", Reward: &reward, Messages: msgs,
		Hidden: []HiddenEntry{{Kind: HiddenUserInstruction, Content: instr}}}
}

func benchPool(n int) []*Trajectory {
	g := lcg(42)
	out := make([]*Trajectory, n)
	for i := range out {
		out[i] = benchTrajectory(&g, i)
	}
	return out
}

// BenchmarkCheck measures checking throughput on a generated pool of
// τ-bench-like trajectories, per core (the benchmark runs on one goroutine).
func BenchmarkCheck(b *testing.B) {
	benchCheckPool(b, benchPool(200), ProfileFor("airline"))
}

// batchGOGC is the collector setting the batch commands (import, recheck,
// check) run the engine under: web/batchgc.go's batchGCPercent.
const batchGOGC = 400

// BenchmarkCheckGenerated checks 500 trajectories of the product's own
// generator (groundwork gen --kind tau: airline and retail, errors and
// recoveries, transfers, hidden hints), each under its domain's profile.
func BenchmarkCheckGenerated(b *testing.B) {
	var pool []*Trajectory
	for t := range Generate(GenOptions{Trajectories: 500, Seed: 1, Kind: "tau"}) {
		pool = append(pool, t)
	}
	benchCheckPool(b, pool, nil)
}

// benchCheckPool checks pool over and over, twice: under Go's default
// collector setting, and under the one the batch commands that run checks
// use (gogc=400, see batchGOGC), which is what an import gets.
func benchCheckPool(b *testing.B, pool []*Trajectory, p *Profile) {
	decisions := 0
	for _, t := range pool {
		decisions += len(Decisions(t))
	}
	for _, gogc := range []int{100, batchGOGC} {
		b.Run(fmt.Sprintf("gogc=%d", gogc), func(b *testing.B) {
			defer debug.SetGCPercent(debug.SetGCPercent(gogc))
			runtime.GC()
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				for _, t := range pool {
					Check(t, p)
				}
			}
			reportDecisionRate(b, decisions*b.N, processCPU()-cpu0)
		})
	}
}

// reportDecisionRate reports decisions per second of wall time and, the
// per-core figure, per second of the process's CPU time: the benchmark runs
// on one goroutine, but the garbage collector works on other cores too, and
// that work is counted here.
func reportDecisionRate(b *testing.B, decisions int, cpu time.Duration) {
	b.ReportMetric(float64(decisions)/b.Elapsed().Seconds(), "decisions/s")
	if cpu > 0 {
		b.ReportMetric(float64(decisions)/cpu.Seconds(), "decisions/cpu-s")
	}
}
