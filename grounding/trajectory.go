package grounding

import "encoding/json"

// Roles of a message in the canonical log (SPEC §2).
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Visibility of a message. The empty string means visible.
const (
	Visible = "visible"
	Hidden  = "hidden"
)

// Trajectory is one executed agent log in the canonical shape of SPEC §2.
// Every importer produces it; it is also an input format (one per JSONL line).
type Trajectory struct {
	ID       string        `json:"id"`
	ParentID string        `json:"parent_id,omitempty"`
	Domain   string        `json:"domain,omitempty"`
	Source   Source        `json:"source"`
	Request  string        `json:"request,omitempty"`
	Tools    []Tool        `json:"tools,omitempty"`
	Reward   *float64      `json:"reward,omitempty"`
	Success  *bool         `json:"success,omitempty"`
	Messages []Message     `json:"messages"`
	Hidden   []HiddenEntry `json:"hidden,omitempty"`
	// Meta is free-form source metadata (model, trial, ...), kept verbatim.
	Meta json.RawMessage `json:"meta,omitempty"`
}

// Source records where a trajectory came from so every decision can be
// traced back: the file, the record's index in it (0-based) and, for
// line-oriented formats, its 1-based line.
type Source struct {
	Format string `json:"format,omitempty"`
	File   string `json:"file,omitempty"`
	Index  int    `json:"index"`
	Line   int    `json:"line,omitempty"`
}

// Tool is a tool schema as the agent saw it (OpenAI function shape).
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// Message is one entry of the log, in source order. Index i of
// Trajectory.Messages is the i-th message of the source list (importers keep
// them 1:1), so SourceIndex equals i for every importer shipped today; it is
// kept explicitly for formats that may split messages.
type Message struct {
	// Index is the message's position in Trajectory.Messages; set by the
	// store when it loads a slice of messages, not part of the format.
	Index   int    `json:"-"`
	Role    string `json:"role"`
	Content string `json:"content"`
	// ContentNull is true when the source content was null/absent (OpenAI
	// assistant messages that only call tools); exports render it as null.
	ContentNull bool `json:"-"`
	// ContentBytes, when larger than len(Content), is the length of a
	// content of which a page's reader loaded only the start (the store's
	// MessageWindow cuts very long ones); 0 when Content is whole.
	ContentBytes int        `json:"-"`
	ToolCalls    []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID   string     `json:"tool_call_id,omitempty"`
	Name         string     `json:"name,omitempty"`
	Error        bool       `json:"error,omitempty"`
	Visibility   string     `json:"visibility,omitempty"`
	HiddenKind   string     `json:"hidden_kind,omitempty"`
}

// IsHidden reports whether the message is outside the agent-visible projection.
func (m Message) IsHidden() bool { return m.Visibility == Hidden }

// ToolCall is one call in an assistant message. Arguments holds the decoded
// JSON value. When the source's argument string could not be decoded,
// Arguments is nil, RawArguments keeps the string verbatim and the call fails
// the execution check.
type ToolCall struct {
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name"`
	Arguments    json.RawMessage `json:"arguments,omitempty"`
	RawArguments string          `json:"raw_arguments,omitempty"`
}

// ArgumentsValid reports whether the call's arguments decoded to JSON.
func (c ToolCall) ArgumentsValid() bool { return c.RawArguments == "" && len(c.Arguments) > 0 }

// HiddenEntry is collector context that is not a message: the user
// simulator's instruction, reference actions, database state, ... At, when
// set, is the message index from which the collector had it; nil means from
// the start.
type HiddenEntry struct {
	Kind    string          `json:"kind"`
	Content json.RawMessage `json:"content"`
	At      *int            `json:"at,omitempty"`
}

// Hidden entry kinds importers produce.
const (
	HiddenUserInstruction  = "user_instruction"
	HiddenReferenceActions = "reference_actions"
	HiddenTeacherHint      = "teacher_hint"
	HiddenDBState          = "db_state"
)

// Succeeded reports R_τ: the success flag when present, else reward ≥ 1
// (τ-bench rewards are 0/1). A trajectory with neither is not successful.
func (t *Trajectory) Succeeded() bool {
	if t.Success != nil {
		return *t.Success
	}
	return t.Reward != nil && *t.Reward >= 1
}

// Parent returns the parent interaction id, defaulting to the trajectory id.
func (t *Trajectory) Parent() string {
	if t.ParentID != "" {
		return t.ParentID
	}
	return t.ID
}

// MarshalJSON writes the canonical form: content is null when the source's
// was (ContentNull), so a canonical file round-trips through the importer.
func (m Message) MarshalJSON() ([]byte, error) {
	type plain Message // no methods: no recursion
	if !m.ContentNull {
		return json.Marshal(plain(m))
	}
	return json.Marshal(struct {
		plain
		Content *string `json:"content"`
	}{plain: plain(m)})
}
