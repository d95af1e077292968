package grounding

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// tauAirline is the real τ-bench airline log the labels were made on. It is
// shared data, not part of the project: the test skips when it is absent.
const tauAirline = "../../shared/realdata/tau-bench/gpt-4o-airline.json"

type labelFile struct {
	Labels []struct {
		Trajectory string            `json:"trajectory"`
		Message    int               `json:"message"`
		Call       *int              `json:"call"`
		Verdict    Verdict           `json:"verdict"`
		Args       map[string]string `json:"args"`
		Reason     string            `json:"reason"`
	} `json:"labels"`
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
	heldFiles, _ := filepath.Glob("testdata/labels/tau-airline-heldout*.json")
	for _, hf := range heldFiles {
		heldOut(t, results, hf)
	}
	var falseApprovals, auto, agree, tp, fp, fn int
	for _, l := range lf.Labels {
		call := -1
		if l.Call != nil {
			call = *l.Call
		}
		d, ok := results[labelKey{l.Trajectory, l.Message, call}]
		if !ok {
			t.Errorf("label %s message %d call %d: no such decision", l.Trajectory, l.Message, call)
			continue
		}
		if d.Verdict == VerdictPass && l.Verdict != VerdictPass {
			falseApprovals++
			t.Errorf("false approval: %s message %d call %d: engine pass, label %s (%s)", l.Trajectory, l.Message, call, l.Verdict, l.Reason)
		}
		if d.Verdict != VerdictAmbiguous {
			auto++
			if d.Verdict == l.Verdict {
				agree++
			} else {
				t.Logf("disagreement: %s message %d call %d: engine %s %v, label %s (%s)", l.Trajectory, l.Message, call, d.Verdict, d.Reasons, l.Verdict, l.Reason)
			}
		}
		switch {
		case d.Verdict == VerdictFail && l.Verdict == VerdictFail:
			tp++
		case d.Verdict == VerdictFail:
			fp++
		case l.Verdict == VerdictFail:
			fn++
		}
	}
	ratio := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return float64(a) / float64(b)
	}
	t.Logf("whole file: %d trajectories, %d decisions, automatically decided %.1f%% (goal ≥ 85%%)",
		audit.Trajectories, audit.Decisions, 100*audit.AutoDecidedShare)
	t.Logf("labels: %d decisions, false approvals %d (goal 0), automatically decided %d, agreement %.1f%% (goal ≥ 90%%)",
		len(lf.Labels), falseApprovals, auto, 100*ratio(agree, auto))
	t.Logf("fail verdicts: precision %.2f, recall %.2f", ratio(tp, tp+fp), ratio(tp, tp+fn))
	t.Logf("pool audit: certified %d, at most two supervised %.1f%%, certified after a real error %.1f%%",
		audit.Certified, 100*audit.AtMostTwoSupervisedShare, 100*audit.CertifiedAfterErrorShare)
	if len(lf.Labels) < 60 {
		t.Errorf("only %d labelled decisions, want at least 60", len(lf.Labels))
	}
	if audit.AutoDecidedShare < 0.85 {
		t.Errorf("automatic-decision rate %.3f, want at least 0.85", audit.AutoDecidedShare)
	}
	if ratio(agree, auto) < 0.90 {
		t.Errorf("agreement %.3f on automatically decided labels, want at least 0.90", ratio(agree, auto))
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
	var fa, auto, agree int
	for _, l := range held.Labels {
		call := -1
		if l.Call != nil {
			call = *l.Call
		}
		d, ok := results[labelKey{l.Trajectory, l.Message, call}]
		if !ok {
			t.Errorf("held-out label %s message %d call %d: no such decision", l.Trajectory, l.Message, call)
			continue
		}
		if d.Verdict == VerdictPass && l.Verdict != VerdictPass {
			fa++
			t.Logf("held-out false approval (%s): %s message %d call %d: %s", filepath.Base(file), l.Trajectory, l.Message, call, l.Reason)
		}
		if d.Verdict != VerdictAmbiguous {
			auto++
			if d.Verdict == l.Verdict {
				agree++
			}
		}
	}
	t.Logf("held-out labels %s: %d decisions, false approvals %d, automatically decided %d, agreement %d/%d",
		filepath.Base(file), len(held.Labels), fa, auto, agree, auto)
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
