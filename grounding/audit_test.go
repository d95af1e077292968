package grounding

import "testing"

func TestAudit(t *testing.T) {
	decision := func(v Verdict, mask int, reasons ...string) DecisionResult {
		if reasons == nil {
			reasons = []string{}
		}
		return DecisionResult{Verdict: v, Mask: mask, Reasons: reasons, Queued: v == VerdictAmbiguous && mask == 0}
	}
	results := []Result{
		// certified, two supervised decisions, no error
		{R: 1, Workflow: true, Decisions: []DecisionResult{decision(VerdictPass, 1), decision(VerdictPass, 1)}},
		// certified, three supervised, one after a real error
		{R: 1, Workflow: true, Decisions: []DecisionResult{
			decision(VerdictPass, 1), decision(VerdictFail, 0, ReasonExecError), decision(VerdictPass, 1), decision(VerdictPass, 1)}},
		// failed trajectory: not certified
		{R: 0, Workflow: true, Decisions: []DecisionResult{decision(VerdictPass, 0, ReasonTermFailed)}},
		// successful but nothing supervised: not certified
		{R: 1, Workflow: true, Decisions: []DecisionResult{decision(VerdictAmbiguous, 0, ReasonKnowledge)}},
	}
	a := NewAudit()
	for _, r := range results {
		a.Add(r)
	}
	if a.Trajectories != 4 || a.Successful != 3 || a.Certified != 2 || a.Decisions != 8 {
		t.Errorf("Audit counts = %+v", a)
	}
	if a.Verdicts[VerdictPass] != 6 || a.Verdicts[VerdictFail] != 1 || a.Verdicts[VerdictAmbiguous] != 1 {
		t.Errorf("Audit verdicts = %v", a.Verdicts)
	}
	if a.Reasons[ReasonExecError] != 1 || a.Reasons[ReasonKnowledge] != 1 || a.Reasons[ReasonTermFailed] != 1 {
		t.Errorf("Audit reasons = %v", a.Reasons)
	}
	if a.Supervised != 5 || a.Queued != 1 || a.AutoDecided != 7 || a.AutoDecidedShare != 7.0/8 {
		t.Errorf("Audit supervised %d queued %d auto %d (%v)", a.Supervised, a.Queued, a.AutoDecided, a.AutoDecidedShare)
	}
	if a.AtMostTwoSupervised != 1 || a.AtMostTwoSupervisedShare != 0.5 {
		t.Errorf("Audit at most two = %d (%v), want 1 (0.5)", a.AtMostTwoSupervised, a.AtMostTwoSupervisedShare)
	}
	if a.CertifiedAfterError != 1 || a.CertifiedAfterErrorShare != 0.5 {
		t.Errorf("Audit after error = %d (%v), want 1 (0.5)", a.CertifiedAfterError, a.CertifiedAfterErrorShare)
	}
	var zero Audit
	zero.Add(results[0])
	if zero.Verdicts[VerdictPass] != 2 {
		t.Errorf("zero Audit.Add = %v", zero.Verdicts)
	}
}
