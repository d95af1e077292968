package grounding

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// FuzzCheck checks arbitrary canonical trajectories under every shipped
// profile: the engine never panics, makes one result per decision, gives
// only the three verdicts, and sets a mask of 1 only for a passing decision
// of a successful trajectory whose workflow holds. The seed corpus in
// testdata/fuzz/FuzzCheck holds small τ-bench-like and tricky logs.
func FuzzCheck(f *testing.F) {
	g := lcg(7)
	for i := 0; i < 3; i++ {
		b, _ := json.Marshal(benchTrajectory(&g, i))
		f.Add(b)
	}
	// A booking and a bag change under the bag allowance, a reply stating
	// an allowance, and a transfer after an offer to bend a denial.
	for _, tr := range []*Trajectory{
		traj("airline").sys(airlinePolicy).user("I am mia_li_3668. Book HAT136 with 3 bags.").
			call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).
			call("book_reservation", `{"user_id":"mia_li_3668","cabin":"economy","flights":[{"flight_number":"HAT136","date":"2024-05-20"}],"passengers":[{"first_name":"Mia","last_name":"Li","dob":"1990-04-05"}],"total_baggages":3,"nonfree_baggages":2}`, `{"reservation_id":"HATHAT"}`).
			say("As a regular member you get 1 free checked bag per economy passenger; Checked bag allowance: 2 free checked bags.").build(),
		traj("airline").sys(airlinePolicy).user("Cancel NO6JO3.").
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
			call("update_reservation_baggages", `{"reservation_id":"NO6JO3","total_baggages":2,"nonfree_baggages":2}`, reservationNO6).
			say("NO6JO3 is not eligible for cancellation. A human agent may be able to assist you further.").user("Yes.").
			call("transfer_to_human_agents", `{"summary":"cancel NO6JO3"}`, "Transfer successful").build(),
	} {
		b, _ := json.Marshal(tr)
		f.Add(b)
	}
	f.Add([]byte("user\x00My id is mia_li_3668, fly May 20th at 7 PM, $250\x00assistant\x00{\"user_id\":\"mia_li_3668\"}\x00tool\x00{\"a\":[1,2,{\"b\":\"2024-05-20T15:00:00\"}]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var tr Trajectory
		if json.Unmarshal(data, &tr) != nil {
			tr = fuzzTrajectory(data)
		}
		ds := Decisions(&tr)
		want := len(ds)
		for _, name := range EmbeddedProfiles() {
			p, err := LoadProfile(name)
			if err != nil {
				t.Fatal(err)
			}
			r := Check(&tr, p)
			if len(r.Decisions) != want {
				t.Fatalf("profile %s: %d results for %d decisions", name, len(r.Decisions), want)
			}
			if r.R != 0 && r.R != 1 {
				t.Fatalf("profile %s: R = %d", name, r.R)
			}
			for i, d := range r.Decisions {
				// The store refuses an import whose check pairs a decision
				// with other messages than Decisions does.
				if e := ds[i]; d.Ordinal != e.Ordinal || d.Message != e.Message || d.Call != e.Call || d.Observation != e.Observation {
					t.Fatalf("profile %s: decision %d is message %d call %d observation %d in the check, message %d call %d observation %d in Decisions",
						name, i, d.Message, d.Call, d.Observation, e.Message, e.Call, e.Observation)
				}
				switch d.Verdict {
				case VerdictPass, VerdictFail, VerdictAmbiguous:
				default:
					t.Fatalf("profile %s: verdict %q", name, d.Verdict)
				}
				if d.Mask != 0 && d.Mask != 1 {
					t.Fatalf("profile %s: mask %d", name, d.Mask)
				}
				if d.Mask == 1 && (d.Verdict != VerdictPass || r.R != 1 || !d.Workflow || !r.Workflow) {
					t.Fatalf("profile %s: mask 1 for verdict %s, R %d, workflow %v/%v", name, d.Verdict, r.R, d.Workflow, r.Workflow)
				}
				if d.Queued && (d.Verdict != VerdictAmbiguous || r.R != 1 || !d.Workflow) {
					t.Fatalf("profile %s: queued %s decision (R %d, workflow %v)", name, d.Verdict, r.R, d.Workflow)
				}
				for _, a := range d.Args {
					_ = a.Where.String()
				}
			}
		}
	})
}

// fuzzTrajectory builds a trajectory from arbitrary bytes, so the fuzzer
// also reaches the text and JSON scanners with content no importer would
// produce: NUL-separated fields alternate a role word and a content; an
// assistant content is also tried as a call's arguments, and a tool message
// answers the latest call.
func fuzzTrajectory(data []byte) Trajectory {
	one := 1.0
	tr := Trajectory{ID: "fuzz", Domain: "airline", Reward: &one, Tools: []Tool{{Name: "lookup", Parameters: json.RawMessage(`{"type":"object"}`)}}}
	fields := bytes.Split(data, []byte{0})
	lastCall := ""
	for i := 0; i+1 < len(fields); i += 2 {
		role, content := string(fields[i]), string(fields[i+1])
		switch role {
		case RoleAssistant:
			m := Message{Role: RoleAssistant}
			if json.Valid(fields[i+1]) {
				lastCall = fmt.Sprintf("c%d", i)
				m.ToolCalls = []ToolCall{{ID: lastCall, Name: "lookup", Arguments: json.RawMessage(content)}}
			} else {
				m.Content = content
			}
			tr.Messages = append(tr.Messages, m)
		case RoleTool:
			tr.Messages = append(tr.Messages, Message{Role: RoleTool, ToolCallID: lastCall, Content: content})
		case "hidden":
			tr.Messages = append(tr.Messages, Message{Role: RoleSystem, Content: content, Visibility: Hidden, HiddenKind: HiddenTeacherHint})
		default:
			tr.Messages = append(tr.Messages, Message{Role: role, Content: content})
		}
	}
	return tr
}
