package grounding

// Audit aggregates check results over a pool of trajectories: the counts the
// dashboard and `groundwork check` show, and the two pool-audit figures of
// SPEC §4 (the paper's certified pool had 40.9% of trajectories with at most
// two supervised decisions and 10.0% with a certified decision after a real
// error). Add results one by one; the shares are kept current.
type Audit struct {
	Trajectories int `json:"trajectories"`
	// Successful counts trajectories with R_τ = 1; WorkflowOK those with no
	// trajectory-level workflow violation.
	Successful int `json:"successful"`
	WorkflowOK int `json:"workflow_ok"`
	// Certified counts trajectories with R_τ = 1, the workflow respected and
	// at least one decision with m_t = 1 (SPEC §4).
	Certified int `json:"certified"`

	Decisions int `json:"decisions"`
	// Verdicts counts decisions per verdict; Reasons decisions per reason
	// code (a decision counts once per code it carries).
	Verdicts map[Verdict]int `json:"verdicts"`
	Reasons  map[string]int  `json:"reasons"`
	// Supervised counts decisions with m_t = 1; Queued the ambiguous
	// decisions a human verdict could change (R_τ = 1, workflow ok).
	Supervised int `json:"supervised"`
	Queued     int `json:"queued"`
	// AutoDecided counts pass and fail verdicts; AutoDecidedShare is their
	// share of all decisions.
	AutoDecided      int     `json:"auto_decided"`
	AutoDecidedShare float64 `json:"auto_decided_share"`

	// AtMostTwoSupervised counts certified trajectories with one or two
	// supervised decisions; the share is over certified trajectories.
	AtMostTwoSupervised      int     `json:"at_most_two_supervised"`
	AtMostTwoSupervisedShare float64 `json:"at_most_two_supervised_share"`
	// CertifiedAfterError counts certified trajectories with a supervised
	// decision that follows a decision whose call really failed
	// (exec.error); the share is over certified trajectories.
	CertifiedAfterError      int     `json:"certified_after_error"`
	CertifiedAfterErrorShare float64 `json:"certified_after_error_share"`
}

// NewAudit returns an empty audit with every verdict present in Verdicts.
func NewAudit() *Audit {
	return &Audit{
		Verdicts: map[Verdict]int{VerdictPass: 0, VerdictFail: 0, VerdictAmbiguous: 0},
		Reasons:  map[string]int{},
	}
}

// Add counts one trajectory's result.
func (a *Audit) Add(r Result) {
	if a.Verdicts == nil {
		a.Verdicts = map[Verdict]int{VerdictPass: 0, VerdictFail: 0, VerdictAmbiguous: 0}
	}
	if a.Reasons == nil {
		a.Reasons = map[string]int{}
	}
	a.Trajectories++
	if r.R == 1 {
		a.Successful++
	}
	if r.Workflow {
		a.WorkflowOK++
	}
	supervised := 0
	afterError := false
	sawError := false
	for _, d := range r.Decisions {
		a.Decisions++
		a.Verdicts[d.Verdict]++
		for _, code := range d.Reasons {
			a.Reasons[code]++
		}
		if d.Verdict != VerdictAmbiguous {
			a.AutoDecided++
		}
		if d.Queued {
			a.Queued++
		}
		if d.Mask == 1 {
			supervised++
			a.Supervised++
			if sawError {
				afterError = true
			}
		}
		if hasString(d.Reasons, ReasonExecError) {
			sawError = true
		}
	}
	if r.R == 1 && r.Workflow && supervised > 0 {
		a.Certified++
		if supervised <= 2 {
			a.AtMostTwoSupervised++
		}
		if afterError {
			a.CertifiedAfterError++
		}
	}
	a.AutoDecidedShare = share(a.AutoDecided, a.Decisions)
	a.AtMostTwoSupervisedShare = share(a.AtMostTwoSupervised, a.Certified)
	a.CertifiedAfterErrorShare = share(a.CertifiedAfterError, a.Certified)
}

func share(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}
