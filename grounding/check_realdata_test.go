package grounding

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// tauAirline is the real τ-bench airline log the labels were made on. It is
// shared data, not part of the project: the test skips when it is absent.
const tauAirline = "../../shared/realdata/tau-bench/gpt-4o-airline.json"

type labelFile struct {
	Labels []handLabel `json:"labels"`
}

// handLabel is one labelled decision (Call nil: a text reply).
type handLabel struct {
	Trajectory string            `json:"trajectory"`
	Message    int               `json:"message"`
	Call       *int              `json:"call"`
	Verdict    Verdict           `json:"verdict"`
	Args       map[string]string `json:"args"`
	Reason     string            `json:"reason"`
}

func (l handLabel) key() labelKey {
	call := -1
	if l.Call != nil {
		call = *l.Call
	}
	return labelKey{l.Trajectory, l.Message, call}
}

func (k labelKey) String() string {
	return fmt.Sprintf("%s message %d call %d", k.traj, k.msg, k.call)
}

// labelScore compares the engine's verdicts with hand labels.
type labelScore struct {
	n                  int         // labels
	missing            []labelKey  // labels naming no decision of the log
	falseApprovals     []handLabel // engine pass, label fail or ambiguous
	disagreements      []string    // decided automatically, other than the label
	auto, agree        int         // decided automatically; and as labelled
	failTP, failFP, fn int         // fail verdicts against fail labels
}

// score compares results with labels.
func score(results map[labelKey]DecisionResult, labels []handLabel) labelScore {
	s := labelScore{n: len(labels)}
	for _, l := range labels {
		d, ok := results[l.key()]
		if !ok {
			s.missing = append(s.missing, l.key())
			continue
		}
		if d.Verdict == VerdictPass && l.Verdict != VerdictPass {
			s.falseApprovals = append(s.falseApprovals, l)
		}
		if d.Verdict != VerdictAmbiguous {
			s.auto++
			if d.Verdict == l.Verdict {
				s.agree++
			} else {
				s.disagreements = append(s.disagreements, fmt.Sprintf("%s: engine %s %v, label %s (%s)", l.key(), d.Verdict, d.Reasons, l.Verdict, l.Reason))
			}
		}
		switch {
		case d.Verdict == VerdictFail && l.Verdict == VerdictFail:
			s.failTP++
		case d.Verdict == VerdictFail:
			s.failFP++
		case l.Verdict == VerdictFail:
			s.fn++
		}
	}
	return s
}

// ratio is a/b, 0 when b is 0.
func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// TestRealAirlineLabels runs the engine on the real gpt-4o airline log and
// compares it with the hand labels in testdata/labels/tau-airline.json:
// false approvals (engine pass where a careful reader says fail or needs a
// human) must be zero; the automatic-decision rate over the whole file and
// the agreement on automatically decided labels are reported.
func TestRealAirlineLabels(t *testing.T) {
	f, err := os.Open(tauAirline)
	if err != nil {
		t.Skipf("real τ-bench log not available (%v); labels need ../shared/realdata", err)
	}
	defer f.Close()
	raw, err := os.ReadFile("testdata/labels/tau-airline.json")
	if err != nil {
		t.Fatal(err)
	}
	var lf labelFile
	if err := json.Unmarshal(raw, &lf); err != nil {
		t.Fatalf("labels: %v", err)
	}
	results, audit := checkLog(t, f, tauAirline)
	// Held-out labels were made after the rules were frozen; their figures
	// are reported, not gated on. One rule came after them (checkReport,
	// engine 1.1.0), made for the one false approval they showed (task 32
	// trial 0, message 32: "Seats: Aisle and middle seat together" after a
	// booking that recorded no seat), so that decision no longer tests
	// generalization; the rule changed no other verdict of this file
	// (task 32 trial 1 states the same) nor of the retail and τ²-bench logs.
	// Set 3 (tau-airline-heldout3.json) was labelled blind on engine 1.2.1:
	// 16 false approvals then; engine 1.2.2's policy rules were made after
	// it, so its later figures no longer measure generalization either.
	// Set 4 (tau-airline-heldout4.json) was labelled blind on engine 1.2.2:
	// 4 false approvals of 45 then; engine 1.2.3's confirmation phrases
	// ("would you like to proceed with the cancellation" on a booking the
	// record rules out; a human agent said to have "more flexibility"
	// with a request the policy denies; the user sent to "the airline's
	// official website") came after it.
	// Set 5 (tau-airline-heldout5.json) was labelled blind on engine 1.2.3:
	// 5 false approvals of 51 then (a flight change priced and offered with
	// the reservation split across two cabins; a human agent offered, in
	// words the policy phrases miss, for a request the policy denies, once
	// for removing a passenger, which even a human cannot do; the transfer
	// that asked for "assistance beyond policy limitations").
	// Set 6 (tau-airline-heldout6.json) was labelled blind on engine 1.2.5:
	// 9 false approvals of 51 then (a human agent offered "to explore any
	// other possibilities" or said to "may be able to assist" after a policy
	// denial, and the transfer asked for "extraordinary circumstances"; a
	// rule the policy does not have, "insurance is non-refundable as per our
	// policy", three times; a cost charging for bags the business allowance
	// makes free; a booking priced from the old reservation's fares, never
	// searched; a transfer of a booking whose error stated the right total).
	// Set 7 (tau-airline-heldout7.json) was labelled blind on engine 1.2.7:
	// 7 false approvals of 54 then (a flight change that moves the
	// reservation's destination; a cancellation offered for a trip whose
	// flights are dated before the current time, and one offered as "within
	// the 24-hour cancellation window" three days after booking; a charge
	// reported on the card the user named while the call charged another;
	// a human agent said to "may be able to assist" with an exception; the
	// user sent to "your email or account" for ids the tools can list; a
	// cancellation promised "regardless of the refund eligibility").
	// Set 8 (tau-airline-heldout8.json) was labelled blind on engine 1.2.9,
	// on trajectories no file had used (other trials of labelled tasks, so
	// unseen decisions, not unseen tasks): 11 false approvals of 51 then
	// (compensation offered before the user asked for any; the user sent to
	// "your email" for a reservation id the user id would find, twice, once
	// with a human agent said to "have additional means"; "insurance cannot
	// be canceled or refunded", a rule the policy does not have, twice; a
	// charge reported on the card the user named while the call charged
	// another; a transfer of a basic-economy change the policy denies; a
	// booking priced from the old reservation's fares, twice, once saying
	// $171 is "not more than $100"; a round trip booked with no return
	// flight and bags nobody asked for; a gold economy allowance stated as
	// 2 bags).
	// Set 9 (tau-airline-heldout9.json) was labelled blind on engine 1.2.14,
	// on other unused trajectories: 9 false approvals of 54 then (a delay
	// certificate offered twice and sent without the change or
	// cancellation the policy asks first; a flight's new price stated as
	// the "price difference" where the record shows a refund, twice; the
	// user sent to contact a human agent or "the airline directly", twice,
	// and to their email for a reservation id the user id would find; a
	// payment said to be moved to a gift card that the results show
	// unchanged). Engine 1.2.15's certificate rule was written for the same
	// class found by an earlier blind set that was lost before it landed,
	// before set 9's results came; 1.2.16's "the airline directly" after.
	// Set 10 (tau-airline-heldout10.json) was labelled blind on engine
	// 1.2.16: 6 false approvals of 54 then (an offer to look the user up
	// by email, which no tool does; a user id taken from an email
	// address's name; a one-passenger cabin upgrade; the user sent to
	// insurance providers; an upgrade said to make a cancellation
	// possible, with a misstated booking time; a payment rule the policy
	// does not have). Engines 1.2.17, 1.2.18 and 1.2.21 were written after
	// it for the first four.
	// Set 11 was labelled blind on 1.2.24 and measured on 1.2.25 (8 of
	// 53), set 12 on 1.2.26 (5 of 51). Set 13 (tau-airline-heldout13.json)
	// was labelled on 1.2.34 from trajectories no set held, which earlier
	// review helpers had read: 1 of 50 (a total counting two flown
	// reservations as upcoming). Set 14 was labelled on 1.2.36 the same
	// way: 6 of 54 (an insurance refund for a change of plan said of a
	// reservation the reply named by its flights only, a cancellation of
	// a basic economy trip listed for a yes, a transfer of a request the
	// policy denied, a human offered to waive a fare difference, business
	// flights of the current day said to be cancellable, and a booking's
	// payment rule applied to a change). Set 15 was labelled on 1.2.38:
	// 3 of 50, all task0-trial3 (New York read as JFK in a listing, a
	// retry announced as an adjustment, a cancellation without a yes,
	// which 1.2.39 fails). Set 16 was labelled on 1.2.39: 4 of 54 (a
	// report giving a flown reservation a wrong reason, a budget
	// comparison hiding a refund, a return date picked from two, and New
	// York read as JFK again). Set 17 was labelled on 1.2.42: 3 of 50 (a
	// refusal by a rule the policy lacks, a flight to the wrong airport
	// offered as a change, and "$64 due" for a change that charged 162,
	// which 1.2.43 fails). Set 18 was labelled on 1.2.44: 5 of 50 ("they
	// may have more flexibility" and a gift card said to be
	// non-refundable, which airline profiles 28 and 29 catch; a search
	// from LAX after the user answered "Los Angeles" to the agent's
	// "Los Angeles (LAX)", which the engine takes as answered; a
	// destination change offered; a claim from a search of another day).
	// Set 19 was labelled on 1.2.49:
	// 4 of 50 (three offers of a destination change, which the main set
	// passes in task13-trial0, and a price difference from the new fare).
	// Set 20 was labelled on 1.2.49: 3 of 50 (a question the records
	// answer, a blanket basic-economy ban, which 1.2.50 sends to a human,
	// a transfer of a denied request). Set 21 was labelled on 1.2.50: 4
	// of 54 (a human recommended "given the circumstances" after a denial
	// and its transfer, which airline profile 33 catches, a
	// cheapest-options list leaving out the cheapest, a destination change
	// offered).
	heldFiles, _ := filepath.Glob("testdata/labels/tau-airline-heldout*.json")
	for _, hf := range heldFiles {
		heldOut(t, results, hf)
	}
	sc := score(results, lf.Labels)
	for _, k := range sc.missing {
		t.Errorf("label %s: no such decision", k)
	}
	for _, l := range sc.falseApprovals {
		t.Errorf("false approval: %s: engine pass, label %s (%s)", l.key(), l.Verdict, l.Reason)
	}
	for _, d := range sc.disagreements {
		t.Logf("disagreement: %s", d)
	}
	t.Logf("whole file: %d trajectories, %d decisions, automatically decided %.1f%% (goal ≥ 85%%)",
		audit.Trajectories, audit.Decisions, 100*audit.AutoDecidedShare)
	t.Logf("labels: %d decisions, false approvals %d (goal 0), automatically decided %d, agreement %.1f%% (goal ≥ 90%%)",
		sc.n, len(sc.falseApprovals), sc.auto, 100*ratio(sc.agree, sc.auto))
	t.Logf("fail verdicts: precision %.2f, recall %.2f", ratio(sc.failTP, sc.failTP+sc.failFP), ratio(sc.failTP, sc.failTP+sc.fn))
	t.Logf("pool audit: certified %d, at most two supervised %.1f%%, certified after a real error %.1f%%",
		audit.Certified, 100*audit.AtMostTwoSupervisedShare, 100*audit.CertifiedAfterErrorShare)
	if sc.n < 60 {
		t.Errorf("only %d labelled decisions, want at least 60", sc.n)
	}
	if audit.AutoDecidedShare < 0.85 {
		t.Errorf("automatic-decision rate %.3f, want at least 0.85", audit.AutoDecidedShare)
	}
	if ratio(sc.agree, sc.auto) < 0.90 {
		t.Errorf("agreement %.3f on automatically decided labels, want at least 0.90", ratio(sc.agree, sc.auto))
	}
}

// labelKey names a decision as the label files do (call -1: a reply).
type labelKey struct {
	traj      string
	msg, call int
}

// checkLog runs the engine on every trajectory of a real log.
func checkLog(t *testing.T, f *os.File, name string) (map[labelKey]DecisionResult, *Audit) {
	t.Helper()
	results := map[labelKey]DecisionResult{}
	audit := NewAudit()
	for tr, err := range Read(f, name, FormatAuto) {
		if err != nil {
			t.Fatal(err)
		}
		r := Check(tr, nil)
		audit.Add(r)
		for _, d := range r.Decisions {
			results[labelKey{tr.ID, d.Message, d.Call}] = d
		}
	}
	return results, audit
}

// heldOut reports a held-out label file's figures against the engine's
// results: false approvals (each logged), decisions decided automatically
// and the agreement among those. They are reported, not gated on.
func heldOut(t *testing.T, results map[labelKey]DecisionResult, file string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var held labelFile
	if err := json.Unmarshal(raw, &held); err != nil {
		t.Fatalf("held-out labels %s: %v", file, err)
	}
	sc := score(results, held.Labels)
	for _, k := range sc.missing {
		t.Errorf("held-out label %s (%s): no such decision", k, filepath.Base(file))
	}
	for _, l := range sc.falseApprovals {
		t.Logf("held-out false approval (%s): %s: %s", filepath.Base(file), l.key(), l.Reason)
	}
	t.Logf("held-out labels %s: %d decisions, false approvals %d, automatically decided %d, agreement %d/%d",
		filepath.Base(file), sc.n, len(sc.falseApprovals), sc.auto, sc.agree, sc.auto)
}

// tauRetail is the real τ-bench retail log (grok-3), shared data like
// tauAirline.
const tauRetail = "../../shared/realdata/tau-bench-retail/tau_bench/tool-calling-grok-3-0.0_range_0--1_user-grok-3-llm_0921131646.json"

// TestRealRetailLabels reports the retail label files' figures
// (testdata/labels/tau-retail-heldout*.json, labelled blind) and the
// whole retail file's automatic-decision rate. The labels measure the
// engine on a second domain; like the airline held-out sets, they are
// reported, not gated on.
func TestRealRetailLabels(t *testing.T) {
	files, _ := filepath.Glob("testdata/labels/tau-retail-heldout*.json")
	if len(files) == 0 {
		t.Skip("no retail label files")
	}
	f, err := os.Open(tauRetail)
	if err != nil {
		t.Skipf("real τ-bench retail log not available (%v); labels need ../shared/realdata", err)
	}
	defer f.Close()
	results, audit := checkLog(t, f, tauRetail)
	for _, file := range files {
		heldOut(t, results, file)
	}
	t.Logf("whole retail file: %d trajectories, %d decisions, automatically decided %.1f%%",
		audit.Trajectories, audit.Decisions, 100*audit.AutoDecidedShare)
}
