package grounding

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// This file holds what an export is (SPEC §6): which trajectories and
// decisions it contains, each assistant message's SFT weight, the target
// token count and the parent-normalized weights. export_render.go writes the
// three formats. Both are pure: the store feeds trajectories in, the HTTP
// handler and the CLI write the bytes out.

// ExportFormat is one of the export downloads.
type ExportFormat string

// Export formats.
const (
	ExportMasks ExportFormat = "masks" // masks.jsonl: one line per trajectory with its decisions
	ExportSFT   ExportFormat = "sft"   // sft.jsonl: OpenAI fine-tuning chat format
	ExportCSV   ExportFormat = "csv"   // decisions.csv: one row per decision
)

// ParseExportFormat returns the format named s (masks, sft or csv), or an
// error wrapping ErrInvalid that lists them.
func ParseExportFormat(s string) (ExportFormat, error) {
	switch f := ExportFormat(strings.ToLower(strings.TrimSpace(s))); f {
	case ExportMasks, ExportSFT, ExportCSV:
		return f, nil
	}
	return "", fmt.Errorf("unknown export format %q: expected masks, sft or csv: %w", s, ErrInvalid)
}

// VerdictSource selects decisions by who settled their verdict.
type VerdictSource string

// Verdict sources.
const (
	VerdictSourceAny   VerdictSource = "any"   // every decision, with its effective verdict
	VerdictSourceAuto  VerdictSource = "auto"  // decisions no human has judged
	VerdictSourceHuman VerdictSource = "human" // decisions with a human verdict
)

// ParseVerdictSource returns the source named s; "" means VerdictSourceAny.
func ParseVerdictSource(s string) (VerdictSource, error) {
	switch v := VerdictSource(strings.ToLower(strings.TrimSpace(s))); v {
	case "":
		return VerdictSourceAny, nil
	case VerdictSourceAny, VerdictSourceAuto, VerdictSourceHuman:
		return v, nil
	}
	return "", fmt.Errorf("unknown verdict source %q: expected auto, human or any: %w", s, ErrInvalid)
}

// Selects reports whether the source keeps decision d.
func (s VerdictSource) Selects(d *ExportDecision) bool {
	switch s {
	case VerdictSourceAuto:
		return d.HumanVerdict == ""
	case VerdictSourceHuman:
		return d.HumanVerdict != ""
	}
	return true
}

// ExportFilter says what an export contains.
type ExportFilter struct {
	RunID   int64
	RunName string // for the header and the file name
	Format  ExportFormat
	// View, when ViewID is not 0, restricts the export to the members of a
	// saved coverage view (the certified trajectories of its parents); the
	// caller resolves the name.
	View   string
	ViewID int64
	// Scale is the student model scale the export is for (a view's own
	// scale); the zero value means none was chosen. It is recorded in the
	// header; the view, not the scale, selects trajectories.
	Scale  Scale
	Domain string        // "": every domain
	Source VerdictSource // which decisions count; "" means VerdictSourceAny
	// Complete leaves out trajectories that still have decisions waiting in
	// the adjudication queue (open or conflicting items).
	Complete bool
	// IncludeEmpty keeps trajectories that have nothing to export: for SFT,
	// no assistant message with weight 1; for masks and CSV, no selected
	// decision.
	IncludeEmpty bool
	// IDs adds groundwork's id, parent_id and sample_weight keys to each
	// SFT line (they are not part of OpenAI's format).
	IDs   bool
	Limit int // at most this many trajectories; 0: all
}

// ExportSummary is what an export contains, counted in the same snapshot
// that the export reads.
type ExportSummary struct {
	Snapshot     time.Time
	Trajectories int
	Decisions    int // selected decisions of those trajectories
	Supervised   int // selected decisions inside assistant messages of weight 1
	// Parents is P: the parent interactions with at least one certified
	// target token; each has total weight 1/P.
	Parents        int
	EngineVersions []string
	Profiles       []string
}

// ExportTrajectory is one trajectory as an export sees it: the agent-visible
// projection only. Nothing of the hidden context is part of it (the store
// never reads hidden messages or entries for an export).
type ExportTrajectory struct {
	ID            int64 // database id
	ExtID         string
	ParentID      string
	Domain        string
	Success       bool // R_τ
	Reward        *float64
	WorkflowOK    bool
	FlowReasons   []string
	EngineVersion string
	Profile       string
	// Tools is the stored tool list (canonical JSON), read for SFT only;
	// trajectories with the same list may share it.
	Tools json.RawMessage
	// SFT is the trajectory's "messages" array as AppendSFTMessages renders
	// it (every weight 0), and Marks its assistant messages' marks: what the
	// store keeps from the import. When SFT is empty, Prepare renders it
	// from Messages: visible messages in order, with Index set (all of them
	// for SFT; the assistant ones are enough for masks and CSV's tokens).
	SFT      string
	Marks    []SFTMark
	Messages []Message
	// Decisions are every decision, in ordinal order. An SFT export renders
	// none, so its store may fill only Message, Mask and HumanVerdict, in
	// message order.
	Decisions []ExportDecision

	// Set by Prepare.
	SelectedDecisions   int
	SupervisedDecisions int
	Tokens              int   // certified target tokens
	weights             []int // SFT weight of each of Marks
	supervised          []int // indexes of the messages of weight 1

	// Weight is the parent-normalized weight, set by ParentWeights.
	Weight float64
}

// ExportDecision is one decision with its effective mask and who settled it.
type ExportDecision struct {
	Ordinal      int
	Message      int // message index in the log
	Call         int // call index in the message; -1: text reply
	Tool         string
	AutoVerdict  Verdict
	HumanVerdict Verdict // "" when no human judged it
	Verdict      Verdict // effective
	Mask         int     // effective
	Reasons      []string
	Annotator    string    // name of the human who decided, "" for auto
	DecidedAt    time.Time // zero for auto
	Selected     bool      // set by Prepare
}

// Source is "human" when a human verdict settles the decision, else "auto".
func (d *ExportDecision) Source() string {
	if d.HumanVerdict != "" {
		return "human"
	}
	return "auto"
}

// Prepare marks the decisions src selects and computes the counts, and each
// assistant message's SFT weight and the target tokens, by its mark (the
// rendering is made from Messages first when none came with t). The counts
// depend on the decisions alone, so a trajectory can be prepared before its
// rendering or messages are loaded (to decide whether it is exported), and
// again after.
//
// An assistant message has weight 1 when it makes at least one decision and
// every decision it makes is selected with mask 1: a message with several
// tool calls is supervised only if all of them are, and a text reply (with
// or without calls beside it) by its own decision as well. Every other
// message has weight 0.
//
// Target tokens estimate the tokens that carry loss, without a tokenizer:
// for each weight-1 message, ceil(b/4) where b is the UTF-8 byte length of
// its content plus, for each call, of the tool name and the argument string
// as exported. About four bytes per token holds for English and JSON with
// BPE vocabularies; only ratios between trajectories of one parent matter.
func (t *ExportTrajectory) Prepare(src VerdictSource) {
	t.SelectedDecisions, t.SupervisedDecisions, t.Tokens = 0, 0, 0
	t.weights, t.supervised = t.weights[:0], t.supervised[:0]
	// Decisions are in ordinal order, so each message's decisions are
	// adjacent and message indexes ascend: the counts need no messages.
	for i := 0; i < len(t.Decisions); {
		j, ok := i, true
		for ; j < len(t.Decisions) && t.Decisions[j].Message == t.Decisions[i].Message; j++ {
			d := &t.Decisions[j]
			d.Selected = src.Selects(d)
			if d.Selected {
				t.SelectedDecisions++
			}
			ok = ok && d.Selected && d.Mask == 1
		}
		if ok {
			t.SupervisedDecisions += j - i
			t.supervised = append(t.supervised, t.Decisions[i].Message)
		}
		i = j
	}
	if t.SFT == "" && len(t.Messages) > 0 {
		b, marks := AppendSFTMessages(nil, t.Messages)
		t.SFT, t.Marks = string(b), marks
	}
	// Weights and tokens of the assistant messages, by their marks.
	k := 0
	for _, mk := range t.Marks {
		for k < len(t.supervised) && t.supervised[k] < mk.Message {
			k++
		}
		w := 0
		if k < len(t.supervised) && t.supervised[k] == mk.Message {
			w = 1
			t.Tokens += mk.Tokens
		}
		t.weights = append(t.weights, w)
	}
}

// targetTokens is ceil(bytes/4) of what a supervised message trains on.
func targetTokens(m *Message) int {
	b := len(m.Content)
	for i := range m.ToolCalls {
		b += len(m.ToolCalls[i].Name) + len(argumentString(&m.ToolCalls[i]))
	}
	return (b + 3) / 4
}

// argumentString is a call's arguments as the SFT export writes them: the
// JSON text, or the undecodable source string verbatim.
func argumentString(c *ToolCall) string {
	if c.RawArguments != "" || len(c.Arguments) == 0 {
		return c.RawArguments
	}
	return string(c.Arguments)
}

// Exported reports whether t belongs in an export with filter f, once
// prepared: SFT needs an assistant message of weight 1, masks and CSV a
// selected decision, unless f.IncludeEmpty.
func (t *ExportTrajectory) Exported(f ExportFilter) bool {
	if f.IncludeEmpty {
		return true
	}
	if f.Format == ExportSFT {
		return t.SupervisedDecisions > 0
	}
	return t.SelectedDecisions > 0
}

// ParentWeights sets the parent-normalized weight of each trajectory of one
// parent interaction (SPEC §4), the way ParentNormalized weighs a whole
// selection, one parent at a time so an export never holds more than one:
// the parent's total weight 1/parents is split among its trajectories in
// proportion to their target tokens. A parent with no target token at all
// weighs 0 (it is not one of the P parents).
func ParentWeights(group []*ExportTrajectory, parents int) {
	rows := make([]WeightRow, len(group))
	for i, t := range group {
		rows[i] = WeightRow{Parent: t.ParentID, Tokens: t.Tokens}
	}
	w, _ := ParentNormalized(rows) // one parent: its weights sum to 1
	for i, t := range group {
		t.Weight = 0
		if parents > 0 {
			t.Weight = w[i] / float64(parents)
		}
	}
}

// DecodeStoredToolCalls decodes the JSON array of tool calls the store keeps
// for a message ({id, name, arguments, raw_arguments} objects) faster than
// encoding/json: an export decodes one per assistant message. Arguments
// share memory with raw.
func DecodeStoredToolCalls(raw []byte) ([]ToolCall, error) {
	if !json.Valid(raw) || jsonKind(raw) != '[' {
		return nil, fmt.Errorf("grounding: stored tool calls are not a JSON array: %.40q", raw)
	}
	items := jsonElements(raw)
	if len(items) == 0 {
		return nil, nil
	}
	calls := make([]ToolCall, len(items))
	for i, item := range items {
		if jsonKind(item) != '{' {
			return nil, fmt.Errorf("grounding: stored tool call %d is not an object", i)
		}
		c := &calls[i]
		jsonMembers(item, func(key []byte, val json.RawMessage) {
			switch string(key) {
			case "id":
				if jsonKind(val) == '"' {
					c.ID = unquoteJSON(val)
				}
			case "name":
				if jsonKind(val) == '"' {
					c.Name = unquoteJSON(val)
				}
			case "arguments":
				if jsonKind(val) != 0 && jsonKind(val) != 'n' {
					c.Arguments = val
				}
			case "raw_arguments":
				if jsonKind(val) == '"' {
					c.RawArguments = unquoteJSON(val)
				}
			}
		})
	}
	return calls, nil
}

// APIToken is a personal token for scripted exports, as listed to its owner:
// never the secret, which is shown once at creation and stored hashed.
type APIToken struct {
	ID         int64
	UserID     int64
	Name       string // the owner's label
	Prefix     string // the secret's first characters, to tell tokens apart
	CreatedAt  time.Time
	LastUsedAt time.Time // zero: never used
	RevokedAt  time.Time // zero: active
}

// Revoked reports whether the token was revoked.
func (t APIToken) Revoked() bool { return !t.RevokedAt.IsZero() }

// ErrTokenRevoked is the answer to a revoked token.
var ErrTokenRevoked = errors.New("the API token was revoked")
