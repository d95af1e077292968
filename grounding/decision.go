package grounding

// Decision identifies one assistant action (SPEC §3): each tool call, and each
// assistant text reply. Ordinal numbers decisions 0..n-1 in trajectory order.
type Decision struct {
	Ordinal int
	// Message is the index of the assistant message in Trajectory.Messages.
	Message int
	// Call is the index of the tool call within the message, or -1 for the
	// message's text reply.
	Call int
	// Tool is the called tool's name; empty for a text reply.
	Tool string
	// Observation is the index of the tool message answering this call, or
	// -1 when none follows (text replies always have -1).
	Observation int
	// Error is true when the observation is an error observation.
	Error bool
}

// IsReply reports whether the decision is a text reply rather than a call.
func (d Decision) IsReply() bool { return d.Call < 0 }

// Decisions lists the decisions of t in order. Only visible assistant
// messages make decisions. A message with non-empty text content yields a
// text-reply decision (Call -1) before its tool-call decisions, because the
// text is shown to the user and its ids and amounts must be supported too.
//
// A call's observation is the first visible tool message after it, before
// the next visible assistant message, that no earlier call took and whose
// tool_call_id is the call's (either id may be missing). Scanning no
// further than the next turn matters because providers reissue call ids
// across turns (the τ-bench airline log reuses one in a quarter of its
// trajectories). Hidden messages take no part: a hidden call makes no
// decision, and a hidden tool answer was never seen by the agent. This is
// the checker's pairing (check.go, pairCalls), and the store refuses an
// import where the two differ.
func Decisions(t *Trajectory) []Decision {
	var out []Decision
	var taken []bool // tool messages already paired, made on the first call
	for i, m := range t.Messages {
		if m.Role != RoleAssistant || m.IsHidden() {
			continue
		}
		if m.Content != "" {
			out = append(out, Decision{Ordinal: len(out), Message: i, Call: -1, Observation: -1})
		}
		for k, c := range m.ToolCalls {
			d := Decision{Ordinal: len(out), Message: i, Call: k, Tool: c.Name, Observation: -1}
			for j := i + 1; j < len(t.Messages); j++ {
				o := &t.Messages[j]
				if o.Role == RoleAssistant && !o.IsHidden() {
					break
				}
				if o.Role != RoleTool || o.IsHidden() || (taken != nil && taken[j]) {
					continue
				}
				if c.ID != "" && o.ToolCallID != "" && o.ToolCallID != c.ID {
					continue
				}
				if taken == nil {
					taken = make([]bool, len(t.Messages))
				}
				taken[j] = true
				d.Observation, d.Error = j, o.Error
				break
			}
			out = append(out, d)
		}
	}
	return out
}

// VisibleBefore returns the indexes of the messages in the agent-visible
// projection V(H<t) of a decision at message index msg: every visible message
// before it.
func VisibleBefore(t *Trajectory, msg int) []int {
	var out []int
	for i := 0; i < msg && i < len(t.Messages); i++ {
		if !t.Messages[i].IsHidden() {
			out = append(out, i)
		}
	}
	return out
}

// HiddenKnownAt returns the hidden context the collector had when the agent
// acted at message index msg: hidden messages before msg, and hidden entries
// whose At is unset or not after msg (indexes into t.Hidden).
func HiddenKnownAt(t *Trajectory, msg int) (messages []int, entries []int) {
	for i := 0; i < msg && i < len(t.Messages); i++ {
		if t.Messages[i].IsHidden() {
			messages = append(messages, i)
		}
	}
	for i, h := range t.Hidden {
		if h.At == nil || *h.At <= msg {
			entries = append(entries, i)
		}
	}
	return messages, entries
}
