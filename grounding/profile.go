package grounding

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// A Profile tells the checker what a domain's tools mean (SPEC §3 "Domain
// profiles"): the semantic action of each tool, the role of each argument,
// the kinds of identifiers whose choice must be justified, outside knowledge
// the agent may need, how errors look, the workflow rules and the success
// threshold. Profiles are JSON files; the shipped ones are embedded (see
// grounding/profiles/README.md for the format, key by key).
//
// The format, in short:
//
//	{
//	  "name": "airline", "version": "1", "description": "…",
//	  "domains": ["airline", "tau-airline"],          // ProfileFor matches these
//	  "tools_given": true,     // "schemas" count as visible tools when a log lists none
//	  "authored": false,       // true: values nothing holds are the agent's own (coding agents)
//	  "schemas": [{"name": …, "description": …, "parameters": {JSON Schema}}],
//	  "tools": {"cancel_reservation": {"action": "irreversible_write",
//	            "args": {"reservation_id": {"role": "identifier", "kind": "reservation"}}}},
//	  "kinds": {"payment": {"paths": ["payment_methods.*"], "choice": true,
//	            "in_text": true, "record": false, "contradict": ["last_four"]}},
//	  "knowledge": {"airport": {"JFK": ["new york", "nyc"]}},
//	  "errors": {"prefixes": ["Error:"], "patterns": ["(?i)^traceback"]},
//	  "workflow": {"order": [{"tools": ["cancel_reservation"], "arg": "reservation_id",
//	                          "after": ["get_reservation_details"], "level": "trajectory"}],
//	               "confirm": {"actions": ["write", "irreversible_write"], "level": "decision",
//	                           "yes": ["yes", "go ahead"], "no": ["no", "don't"]}},
//	  "choice": "queue",       // or "fail": what an unjustified choice does
//	  "choice_actions": ["write", "irreversible_write"],
//	  "success": {"reward_threshold": 1},
//	  "weak": {"max_int": 9, "tokens": ["yes", "no"]}
//	}
//
// An argument's "args" entry may be just a role string ("identifier").
// Argument paths use [*] for any array index: "flights[*].flight_number".
type Profile struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Description string   `json:"description,omitempty"`
	Domains     []string `json:"domains,omitempty"`
	// ToolsGiven says the domain's tools reach the agent through its system
	// prompt or scaffold even when the log carries no tools list (τ-bench
	// historical trajectories): then Schemas are the visible tools.
	ToolsGiven bool                    `json:"tools_given"`
	Schemas    []Tool                  `json:"schemas,omitempty"`
	Tools      map[string]ToolProfile  `json:"tools,omitempty"`
	Kinds      map[string]KindProfile  `json:"kinds,omitempty"`
	Knowledge  map[string]KnowledgeMap `json:"knowledge,omitempty"`
	Errors     ErrorProfile            `json:"errors"`
	Workflow   WorkflowProfile         `json:"workflow"`
	// Authored says the agent writes what it types: code, scripts, file
	// names, commands. A value nothing visible supports and no hidden entry
	// holds is then the agent's own (a variable name, a test value, a new
	// script's path, a module it knows), supported as free text, instead of
	// vis.unsupported. A value found only in hidden context is still a leak.
	// Meant for coding agents, where failing such values would mask most
	// of every script the agent writes.
	Authored bool `json:"authored,omitempty"`
	// Choice is what an unjustified choice among visible candidates does:
	// "queue" (ambiguous, the default) or "fail".
	Choice string `json:"choice,omitempty"`
	// ChoiceActions are the semantic actions whose identifier arguments must
	// be singled out when several candidates are visible (default: write,
	// irreversible_write). Reads may explore candidates freely.
	ChoiceActions []string       `json:"choice_actions,omitempty"`
	Success       SuccessProfile `json:"success"`
	Weak          WeakProfile    `json:"weak"`
	// PolicyClaims are statements of the rules an agent's reply may make
	// that the domain's policy contradicts ("basic economy cannot change
	// cabin" where the policy lets every reservation change cabin).
	PolicyClaims []PolicyClaim `json:"policy_claims,omitempty"`
	// Allowances are counts the policy grants free by tier and class
	// (checked bags): a call's charged count must follow them.
	Allowances []AllowanceRule `json:"allowances,omitempty"`
	// Compensations are payments the policy grants per head in given
	// cases to eligible customers (travel certificates): a call's amount
	// must be one of them.
	Compensations []CompensationRule `json:"compensations,omitempty"`
	// Charges are the payments a write's result records: a reply that
	// reports what the write charged or refunded must state one of them.
	Charges []ChargeRule `json:"charges,omitempty"`
	// SameDay are records whose dates a reply may group by day ("you have
	// two flights on May 17"): the group it names must be the records'.
	SameDay []SameDayRule `json:"same_day,omitempty"`
	// OriginalPayment are records whose payment history says which method
	// is "the original payment method" a reply may name by a card's last
	// four digits.
	OriginalPayment []OriginalPaymentRule `json:"original_payment,omitempty"`
	// UpcomingTotal are records with dates whose payments a reply may add
	// up as the user's "upcoming" ones: none of them may be past.
	UpcomingTotal []UpcomingTotalRule `json:"upcoming_total,omitempty"`
	// ItemOptions says where tool results detail an item's options: the
	// options a reply states for an item it names must be the item's.
	ItemOptions *ItemOptionsRule `json:"item_options,omitempty"`
	// RecordFacts are facts a reply may state of the records it names
	// ("basic economy", "no travel insurance"): each named record's own
	// must agree.
	RecordFacts []RecordFactRule `json:"record_facts,omitempty"`
	// QuotedPhrases: a phrase a reply puts in quotes ("The Raven") must
	// be in a visible message; one no message holds came from outside
	// knowledge or nowhere, and goes to a human. For domains whose
	// replies quote what the user or the tools said (customer service),
	// not code or commands.
	QuotedPhrases bool `json:"quoted_phrases,omitempty"`

	compiled *profileRuntime
}

// ToolProfile is what the profile says about one tool.
type ToolProfile struct {
	// Action is the semantic action: read, write, irreversible_write,
	// transfer, compute, think or respond.
	Action string                `json:"action"`
	Args   map[string]ArgProfile `json:"args,omitempty"`
}

// ArgProfile is the role of one argument path and how to check it.
type ArgProfile struct {
	// Role: identifier, amount, datetime, enum, boolean or free_text.
	Role string `json:"role"`
	// Kind names an entry of Profile.Kinds: the value is one of a visible
	// set of candidates (a payment method, a flight, a reservation).
	Kind string `json:"kind,omitempty"`
	// Knowledge names an entry of Profile.Knowledge that may explain a value
	// absent from the visible history (a city → its airport code).
	Knowledge string `json:"knowledge,omitempty"`
	// UserChoice marks an enum or boolean the user must have stated (cabin,
	// insurance): the schema listing the value is not enough.
	UserChoice bool `json:"user_choice,omitempty"`
}

// UnmarshalJSON accepts a bare role string as shorthand.
func (a *ArgProfile) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*a = ArgProfile{Role: s}
		return nil
	}
	type plain ArgProfile
	return json.Unmarshal(b, (*plain)(a))
}

// KindProfile describes a kind of identifier that observations list as
// candidates.
type KindProfile struct {
	// Paths are JSON path patterns inside observations whose values (or
	// object keys) are candidates: "payment_methods.*", "**.flight_number",
	// "reservations[*]". "*" is one key or index, "**" (first only) any
	// prefix.
	Paths []string `json:"paths"`
	// Choice: when several candidates are visible, the one used must have
	// been singled out (named by the user, described uniquely by one of its
	// attributes, or proposed by the agent and accepted by the user).
	Choice bool `json:"choice,omitempty"`
	// InText applies the choice rule to values the agent's text replies
	// propose, not only to calls.
	InText bool `json:"in_text,omitempty"`
	// Record: a candidate listed in the observation of a read of the entity
	// the write is keyed by (the flights of the reservation being changed)
	// counts as singled out.
	Record bool `json:"record,omitempty"`
	// Contradict lists attributes (e.g. last_four) that, when the user
	// states one that belongs to another candidate, contradict the value.
	Contradict []string `json:"contradict,omitempty"`
	// RecordPhrases: when the user said one of these ("original payment"),
	// the candidate listed in the record of the entity the write is keyed
	// by (the reservation's payment history) counts as singled out.
	RecordPhrases []string `json:"record_phrases,omitempty"`
}

// KnowledgeMap maps a value to the visible phrases that name it with outside
// knowledge: {"JFK": ["new york", "nyc"]}.
type KnowledgeMap map[string][]string

// ErrorProfile says which observations are errors, beyond the importer's
// own flag.
type ErrorProfile struct {
	Prefixes []string `json:"prefixes,omitempty"`
	Patterns []string `json:"patterns,omitempty"`
}

// WorkflowProfile holds the ordering and confirmation rules.
type WorkflowProfile struct {
	Order      []OrderRule     `json:"order,omitempty"`
	Confirm    *ConfirmRule    `json:"confirm,omitempty"`
	Conditions []ConditionRule `json:"conditions,omitempty"`
}

// ConditionRule is a policy condition on a write that depends on the
// record of the entity it is keyed by: a call to one of Tools is allowed
// when the latest visible record whose Arg field holds the call's Arg value
// was created within Within.Hours of the current time the system message
// states, or meets one of Allow. Otherwise the decision is ambiguous (a
// human decides: logs' reference actions sometimes break such rules, so
// the engine does not fail them). Without a visible record or a stated
// current time the rule says nothing.
type ConditionRule struct {
	Tools []string `json:"tools"`
	Arg   string   `json:"arg"`
	// Rule is the policy sentence, shown in the evidence.
	Rule   string      `json:"rule,omitempty"`
	Within *WithinRule `json:"within,omitempty"`
	Allow  []AllowRule `json:"allow,omitempty"`
	// Claims are phrases by which an agent's reply (or a transfer summary)
	// tells the user the write is allowed or not ("eligible for a full
	// refund", "does not meet the conditions"). A claim the record of the
	// entity it is about contradicts is ambiguous: the reply states a
	// policy outcome nothing visible supports.
	Claims *ClaimPhrases `json:"claims,omitempty"`
	// UnlessPast is a date path of the record ("flights[*].date"): when one
	// of its dates is before the current day, the write is not allowed
	// whatever else holds (a trip already flown cannot be cancelled).
	UnlessPast string `json:"unless_past,omitempty"`
	// Describe is a path of the record's values ("flights[*].flight_number")
	// by which a reply that names no record describes one ("DEN to MIA
	// (flight HAT130)"): the claims of a reply that names no id are about
	// the one record whose values it names, when exactly one's are named.
	Describe string `json:"describe,omitempty"`
	// Route keeps a write's new itinerary on the record's route: see
	// RouteRule. A rule with Route checks only that.
	Route *RouteRule `json:"route,omitempty"`
}

// RouteRule: the flights a write lists (Flights, a path of the call's
// arguments to flight numbers) must start at the record's Origin and, for
// a one-way trip (the record's Trip field says "one_way"), end at its
// Destination; for a round trip they must reach the Destination and end
// back at the Origin. Each flight's endpoints are read from the latest
// visible tool result that lists the flight number with "origin" and
// "destination"; a flight found nowhere makes the rule say nothing.
//
// OfCall makes the call's own arguments the record: a booking states the
// route it books (origin, destination, flight_type), and its flights must
// fly it. The condition's arg is then not read.
type RouteRule struct {
	Flights     string `json:"flights"`
	OfCall      bool   `json:"of_call,omitempty"`
	Origin      string `json:"origin,omitempty"`      // default "origin"
	Destination string `json:"destination,omitempty"` // default "destination"
	Trip        string `json:"trip,omitempty"`        // default "flight_type"
}

// PolicyClaim is a statement the policy contradicts: a sentence of an agent
// reply that contains a phrase of every group of All (case-insensitive) and
// none of Unless is ambiguous (vis.unsupported on the sentence, with Note:
// what the policy says instead).
type PolicyClaim struct {
	All    [][]string `json:"all"`
	Unless []string   `json:"unless,omitempty"`
	// UnlessReply: the claim is fine in a reply that says one of these in
	// any sentence ("I need the reservation id." next to "I can look it up
	// by your user id").
	UnlessReply []string `json:"unless_reply,omitempty"`
	// UnlessUser: the sentence is fine once a visible user message before
	// it said one of these (an offer of compensation the user asked for).
	UnlessUser []string `json:"unless_user,omitempty"`
	// With: the claim holds only in a reply that says one of these
	// somewhere (in any sentence): a human agent offered "to assist you
	// further" only matters next to a denial.
	With []string `json:"with,omitempty"`
	// WithUser: or the latest visible user message before the reply says
	// one of these (the user asked for an exception). With With, the
	// agent's previous text reply counts too (the denial came a turn
	// earlier).
	WithUser []string `json:"with_user,omitempty"`
	// WithUserAny: WithUser holds when any visible user message before
	// the reply says one of its phrases, not only the latest (the user
	// asked for a cabin change, then whether basic economy allows changes).
	WithUserAny bool `json:"with_user_any,omitempty"`
	// UnlessResult: the sentence is fine once a visible tool result before
	// it holds one of these (a flight's status that was looked up).
	UnlessResult []string `json:"unless_result,omitempty"`
	// UnlessAfter: the claim is fine once a call to one of these tools
	// succeeded before the reply (a delay certificate offered after the
	// reservation was changed or cancelled).
	UnlessAfter []string `json:"unless_after,omitempty"`
	// Statements: questions ("which flight was delayed?") do not count.
	Statements bool `json:"statements,omitempty"`
	// Questions: only questions count ("was the reservation made within
	// the last 24 hours?"): asking the user what a record shows, where
	// saying the same as a statement ("I need to check whether it was
	// made within 24 hours") announces a lookup.
	Questions bool `json:"questions,omitempty"`
	// Asks: the sentence asks the user for what the visible tools would
	// show (a record's route, when it was made), rather than stating a
	// rule; the finding says so.
	Asks bool `json:"asks,omitempty"`
	// Fact: the sentence states a fact the visible results must show (a
	// flight's status), not a rule; the finding says so.
	Fact bool `json:"fact,omitempty"`
	// ContradictsTools: the sentence says what the visible tools
	// contradict: it denies what they provide ("I am unable to provide
	// your gift card balances" where the user's details list them) or
	// offers what none of them does ("give me your email and I can look up
	// your user id" where users are looked up by id only). No reading of
	// the policy makes it true: it fails (vis.contradiction) instead of
	// going to a human.
	ContradictsTools bool `json:"contradicts_tools,omitempty"`
	// Fails: a sentence making this claim fails (vis.contradiction)
	// instead of going to a human: for claims careful readers fail
	// whenever they meet them (a rule the policy plainly contradicts,
	// stated in a reply), where a queue only delays the same verdict.
	Fails bool `json:"fails,omitempty"`
	// Transfer: a transfer to a human that follows a reply making this
	// claim (a human agent said to be able to grant what the policy
	// denies) carries the offer out, and is ambiguous too.
	Transfer bool `json:"transfer,omitempty"`
	// RepliesOnly: the claim is checked in agent replies only, not in the
	// free text of call arguments: a transfer summary that reports what
	// the agent told the user ("requesting a refund for non-refundable
	// travel insurance") does not tell the user anything.
	RepliesOnly bool `json:"replies_only,omitempty"`
	// TransferOnly: the reply itself passes (a plain offer to transfer
	// after a denial is fine) and only the transfer that carries the offer
	// out is ambiguous: a request the policy denied is not for a human
	// either. Implies Transfer and RepliesOnly.
	TransferOnly bool   `json:"transfer_only,omitempty"`
	Note         string `json:"note"`
}

// AllowanceRule is a free allowance the policy grants per head by tier
// and class ("a silver member gets 2 free checked bags per economy
// passenger"). On a call to one of Tools, the Charged argument must be
// max(0, Total - Free[tier][class] × the number of items of Per). Per and
// Class are read from the call's arguments, else from the record the call
// is keyed by (the latest visible result whose top-level Record field
// holds the call's Record value: the reservation being changed); the tier
// is the Tier field of the latest visible record whose TierOf field holds
// the owner (TierOf read from the call, else from that record: the user
// who booked). A charged count other than that is vis.contradiction
// (fail); the same count is vis.derived, with the arithmetic. When the
// tier was never read, only a count no tier gives fails; when another
// part is not visible the rule says nothing and the argument is checked
// as any other amount.
type AllowanceRule struct {
	Tools   []string                  `json:"tools"`
	Total   string                    `json:"total"`
	Charged string                    `json:"charged"`
	Record  string                    `json:"record,omitempty"`
	Per     string                    `json:"per"`
	Class   string                    `json:"class"`
	TierOf  string                    `json:"tier_of"`
	Tier    string                    `json:"tier"`
	Free    map[string]map[string]int `json:"free"`
	// Rule is the policy sentence, shown in the evidence.
	Rule string `json:"rule,omitempty"`
	// Items are the words a reply counts the free items by ("checked
	// bag", "bag"): a reply's "2 free checked bags" is then checked
	// against the table (see allowanceClaims).
	Items []string `json:"items,omitempty"`
}

// CompensationRule is a payment the policy grants per head in given cases
// to eligible customers ("100 dollars per passenger for a cancelled flight,
// 50 for a delayed one once the reservation was changed or cancelled, to
// silver or gold members, insured or business reservations"). On a call
// to one of Tools, the Amount argument must be Unit × the number of items
// of Per of a visible record (the latest visible successful result whose
// top-level Record field holds an id and whose Owner field, when it has
// one, holds the call's Owner argument) for some case, the case's After
// tools must have changed that record successfully before the call, and
// one Eligible field must hold. Such an amount is vis.derived, with the
// arithmetic; one that no case and record give, or whose case lacks its
// After change or its eligibility, is ambiguous (the logs' reference
// actions sometimes break the rule; a human decides). With no record of
// the owner visible the rule says nothing.
type CompensationRule struct {
	Tools    []string           `json:"tools"`
	Amount   string             `json:"amount"`
	Owner    string             `json:"owner"`
	Record   string             `json:"record"`
	Per      string             `json:"per"`
	Cases    []CompensationCase `json:"cases"`
	Eligible []EligibleField    `json:"eligible,omitempty"`
	// Rule is the policy sentence, shown in the evidence.
	Rule string `json:"rule,omitempty"`
}

// ChargeRule names where a write's result records its payments: History
// is the result's top-level array of payments and Amount each payment's
// amount (negative: money back). The text reply right after a successful
// call to one of Tools that reports a charge or a refund ("$495 has been
// charged to your card", "a refund of $114") must state one of those
// amounts, or their total, with its sign: a reply that reports another
// amount, or a refund as a charge, fails (vis.contradiction), pointing at
// the result.
//
// Method, when set, names both the call's argument and each payment's
// field that hold the payment method (payment_id): a reply that says the
// payment was taken with or moved to the method ("the payment method has
// been updated to use your gift card") fails when the result records no
// payment by the call's method.
type ChargeRule struct {
	Tools   []string `json:"tools"`
	History string   `json:"history"`
	Amount  string   `json:"amount"`
	Method  string   `json:"method,omitempty"`
}

// SameDayRule checks what a reply says about which of the user's records
// (keyed by Field, e.g. reservation_id; the latest visible tool result of
// each) fall on the same day (their Dates, a path such as
// "flights[*].date"). A record whose Status field is one of Closed (a
// cancelled reservation) no longer counts. A sentence holding one of
// Claims ("same day", "flights on") that names records for a date must
// name every counted record with a date on that day: one that leaves one
// out is ambiguous (vis.unsupported; the label sets split on such
// slips). A sentence holding one of None ("no other duplicate") while two
// counted records share a day (the one the sentence names, if it names
// one) fails (vis.contradiction): the records say otherwise.
type SameDayRule struct {
	Field  string   `json:"field"`
	Dates  string   `json:"dates"`
	Status string   `json:"status,omitempty"`
	Closed []string `json:"closed,omitempty"`
	Claims []string `json:"claims"`
	None   []string `json:"none,omitempty"`
}

// ItemOptionsRule checks the options a reply states for an item it names
// by id: an object of a visible tool result whose ID field ("item_id") is
// the id details them in its Options object ("options": {"style":
// "v-neck"}). A "Name: Value" pair of the reply ("Style: Crew Neck"), in
// a list item that names that one item or inside the parentheses that
// hold its id, whose name is an option of the item and whose value is
// not the item's (case, spaces and hyphens aside) fails
// (vis.contradiction).
type ItemOptionsRule struct {
	ID      string `json:"id"`
	Options string `json:"options"`
}

// UpcomingTotalRule checks a total a reply gives for the user's records
// still to come ("the total cost of your upcoming flights is $17,645"). A
// sentence holding one of Phrases and a "$" amount that a visible compute
// call (a calculator) returned, whose expression adds in an amount of the
// History (payment_history, each payment's Amount) of a visible record
// (keyed by Field, reservation_id) whose Dates (flights[*].date) are all
// before the day the system message gives as the current time, fails
// (vis.contradiction): the total counts a record already flown as
// upcoming. An operand that is also the payment of a record still to come
// says nothing.
type UpcomingTotalRule struct {
	Field   string   `json:"field"`
	Dates   string   `json:"dates"`
	History string   `json:"history"`
	Amount  string   `json:"amount"`
	Phrases []string `json:"phrases"`
}

// RecordFactRule is a fact a reply may state of records (keyed by Field,
// reservation_id): a sentence holding one of Phrases ("basic economy")
// that names visible records in one list ("UDMOP1, XAZ3C0, and 4XGCCM")
// says each has Value at the top-level Key (cabin basic_economy); a named
// record whose latest visible version gives Key another value fails
// (vis.contradiction). A phrase right after "not", "from", "to", "upgrade",
// … or right before " to " states no fact of the record, and a sentence
// naming records apart ("X has insurance, Y has none") is not read.
type RecordFactRule struct {
	Field   string   `json:"field"`
	Key     string   `json:"key"`
	Value   string   `json:"value"`
	Phrases []string `json:"phrases"`
}

// OriginalPaymentRule checks a reply that names a card by its last four
// digits as a record's original payment method ("the refund goes to the
// original payment method, the credit card ending in 6791"). The record
// (keyed by Field, e.g. order_id) is the last one the reply names before
// the digits, else the last one named before the reply; its History (a
// top-level field, payment_history) lists the Method (payment_method_id)
// of each payment. A sentence holding one of Phrases followed, within a
// few words and with no "or" between, by a card's last four digits fails
// (vis.contradiction) when every method of the history is visibly another
// one: its id does not end in the digits and the visible details of the
// method list other last four digits, or none (PayPal).
type OriginalPaymentRule struct {
	Field   string   `json:"field"`
	History string   `json:"history"`
	Method  string   `json:"method"`
	Phrases []string `json:"phrases"`
}

// CompensationCase is one case of a CompensationRule: Unit per head, after
// a successful call to one of After on the record (when set).
type CompensationCase struct {
	Name  string   `json:"name"`
	Unit  float64  `json:"unit"`
	After []string `json:"after,omitempty"`
}

// EligibleField holds when Field is one of Values, in the record (Of
// "record", the default) or in the owner's own record (Of "owner": the
// latest visible result that states Field and whose Owner field, or the
// call it answers, holds the owner).
type EligibleField struct {
	Field  string   `json:"field"`
	Of     string   `json:"of,omitempty"`
	Values []string `json:"values"`
}

// ClaimPhrases are the phrases of a ConditionRule's claims.
type ClaimPhrases struct {
	Allowed []string `json:"allowed,omitempty"`
	Denied  []string `json:"denied,omitempty"`
}

// WithinRule: the record's Field (a date-time) is at most Hours before the
// current time.
type WithinRule struct {
	Field string  `json:"field"`
	Hours float64 `json:"hours"`
}

// AllowRule holds when the record's Field is one of Values (when Field is
// set) and a visible user message before the call says one of UserWords
// (when set): "insurance" yes and a health or weather reason.
type AllowRule struct {
	Field     string   `json:"field,omitempty"`
	Values    []string `json:"values,omitempty"`
	UserWords []string `json:"user_words,omitempty"`
}

// OrderRule: a call to one of Tools must follow a successful call to one of
// After with the same value of Arg (AfterArg in the earlier call, default
// Arg). Level is "trajectory" (default) or "decision".
type OrderRule struct {
	Tools    []string `json:"tools"`
	Arg      string   `json:"arg"`
	After    []string `json:"after"`
	AfterArg string   `json:"after_arg,omitempty"`
	// AfterOutput lists tools whose successful observation containing the
	// value also counts (book_reservation returns the reservation it made).
	AfterOutput []string `json:"after_output,omitempty"`
	Level       string   `json:"level,omitempty"`
}

// ConfirmRule: a call whose tool has one of Actions needs, before it, an
// assistant message naming at least one of its argument values and, after
// that message, a user reply that says yes (matches Yes and does not start
// with one of No). Level is "decision" (default) or "trajectory".
type ConfirmRule struct {
	Actions []string `json:"actions"`
	Tools   []string `json:"tools,omitempty"`
	Except  []string `json:"except,omitempty"`
	Level   string   `json:"level,omitempty"`
	Yes     []string `json:"yes,omitempty"`
	No      []string `json:"no,omitempty"`
	// Priced are tools whose calls charge or refund money: the agent text
	// the user's yes answered must state an amount ("$" and digits) or
	// say that nothing is charged (one of Unpriced); a write confirmed
	// without its price is ambiguous (the user accepted a cost nobody
	// told them).
	Priced   []string `json:"priced,omitempty"`
	Unpriced []string `json:"unpriced,omitempty"`
}

// SuccessProfile sets R_τ: the success flag when the log has one, else
// reward ≥ RewardThreshold (default 1).
type SuccessProfile struct {
	RewardThreshold *float64 `json:"reward_threshold,omitempty"`
}

// WeakProfile sets what proves nothing alone: integers with |v| ≤ MaxInt
// (default 9) and the listed tokens.
type WeakProfile struct {
	MaxInt *int     `json:"max_int,omitempty"`
	Tokens []string `json:"tokens,omitempty"`
}

// Semantic actions of tools.
const (
	ActionRead              = "read"
	ActionWrite             = "write"
	ActionIrreversibleWrite = "irreversible_write"
	ActionTransfer          = "transfer"
	ActionCompute           = "compute"
	ActionThink             = "think"
	ActionRespond           = "respond"
)

// Argument roles.
const (
	RoleIdentifier = "identifier"
	RoleAmount     = "amount"
	RoleDatetime   = "datetime"
	RoleEnum       = "enum"
	RoleBoolean    = "boolean"
	RoleFreeText   = "free_text"
)

var (
	validActions = []string{ActionRead, ActionWrite, ActionIrreversibleWrite, ActionTransfer, ActionCompute, ActionThink, ActionRespond}
	validRoles   = []string{RoleIdentifier, RoleAmount, RoleDatetime, RoleEnum, RoleBoolean, RoleFreeText}
)

//go:embed profiles/*.json
var profileFS embed.FS

// embeddedProfiles are the shipped profile names, in ProfileFor's order.
var embeddedProfiles = []string{"airline", "retail", "swe", "generic"}

var (
	embeddedOnce sync.Once
	embedded     map[string]*Profile
	embeddedErr  error
)

func loadEmbedded() {
	embedded = make(map[string]*Profile)
	for _, name := range embeddedProfiles {
		file := "profiles/" + name + ".json"
		data, err := profileFS.ReadFile(file)
		if err != nil {
			embeddedErr = err
			return
		}
		p, err := ParseProfile("grounding/"+file, data)
		if err != nil {
			embeddedErr = err
			return
		}
		embedded[name] = p
	}
}

func embeddedProfile(name string) *Profile {
	embeddedOnce.Do(loadEmbedded)
	if embeddedErr != nil {
		panic("grounding: shipped profile is invalid: " + embeddedErr.Error())
	}
	return embedded[name]
}

// EmbeddedProfiles returns the names of the shipped profiles.
func EmbeddedProfiles() []string { return append([]string(nil), embeddedProfiles...) }

// LoadProfile returns the shipped profile called nameOrPath ("airline",
// "retail", "swe", "generic"), else reads and parses the file at that path.
// Errors wrap ErrInvalid when the file is not a valid profile.
func LoadProfile(nameOrPath string) (*Profile, error) {
	if p := embeddedProfile(nameOrPath); p != nil {
		return p, nil
	}
	data, err := os.ReadFile(nameOrPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !strings.ContainsAny(nameOrPath, `/\.`) {
			return nil, fmt.Errorf("profile %q: neither a shipped profile (%s) nor a file", nameOrPath, strings.Join(embeddedProfiles, ", "))
		}
		return nil, fmt.Errorf("profile: %w", err)
	}
	return ParseProfile(nameOrPath, data)
}

// ProfileFor returns the shipped profile for a trajectory's domain: the one
// whose name or domains list matches it, else the generic profile.
func ProfileFor(domain string) *Profile {
	d := strings.ToLower(strings.TrimSpace(domain))
	if d != "" {
		for _, name := range embeddedProfiles {
			p := embeddedProfile(name)
			if d == p.Name {
				return p
			}
			for _, alias := range p.Domains {
				if d == strings.ToLower(alias) {
					return p
				}
			}
		}
		for _, name := range embeddedProfiles {
			if name != "generic" && strings.Contains(d, name) {
				return embeddedProfile(name)
			}
		}
	}
	return embeddedProfile("generic")
}

// ProfileError is a problem in a profile file: the file, the key (a path such
// as tools.book_reservation.args["flights[*].date"].role) and what is wrong.
type ProfileError struct {
	File    string
	Key     string
	Problem string
}

func (e *ProfileError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("profile %s: %s", e.File, e.Problem)
	}
	return fmt.Sprintf("profile %s: %s: %s", e.File, e.Key, e.Problem)
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *ProfileError) Unwrap() error { return ErrInvalid }

// ParseProfile parses and validates a profile. file names the source in
// errors, which are *ProfileError values naming the key and the problem.
func ParseProfile(file string, data []byte) (*Profile, error) {
	v := profileValidator{file: file}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, v.syntax(data, err)
	}
	if dec.More() {
		return nil, &ProfileError{File: file, Problem: "more than one JSON value"}
	}
	if err := v.document(doc); err != nil {
		return nil, err
	}
	var p Profile
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, &ProfileError{File: file, Problem: err.Error()}
	}
	rt, err := compileProfile(&p, file)
	if err != nil {
		return nil, err
	}
	p.compiled = rt
	return &p, nil
}

type profileValidator struct{ file string }

func (v profileValidator) fail(key, format string, args ...any) error {
	return &ProfileError{File: v.file, Key: key, Problem: fmt.Sprintf(format, args...)}
}

func (v profileValidator) syntax(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := 1, 1
		for i := 0; i < int(se.Offset) && i < len(data); i++ {
			if data[i] == '\n' {
				line++
				col = 1
			} else {
				col++
			}
		}
		return &ProfileError{File: v.file, Problem: fmt.Sprintf("invalid JSON at line %d, column %d: %v", line, col, err)}
	}
	return &ProfileError{File: v.file, Problem: "invalid JSON: " + err.Error()}
}

func profileKey(parent, key string) string {
	if plainKey(key) && !strings.ContainsAny(key, "[]*") {
		if parent == "" {
			return key
		}
		return parent + "." + key
	}
	return parent + "[" + fmt.Sprintf("%q", key) + "]"
}

// object checks that x is an object whose keys are all allowed.
func (v profileValidator) object(key string, x any, allowed ...string) (map[string]any, error) {
	m, ok := x.(map[string]any)
	if !ok {
		return nil, v.fail(key, "must be an object, not %s", jsonTypeName(x))
	}
	if allowed != nil {
		names := make([]string, 0, len(m))
		for k := range m {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if !hasString(allowed, k) {
				return nil, v.fail(profileKey(key, k), "unknown key (allowed: %s)", strings.Join(allowed, ", "))
			}
		}
	}
	return m, nil
}

func (v profileValidator) str(key string, x any) (string, error) {
	s, ok := x.(string)
	if !ok {
		return "", v.fail(key, "must be a string, not %s", jsonTypeName(x))
	}
	return s, nil
}

func (v profileValidator) strings(key string, x any) ([]string, error) {
	a, ok := x.([]any)
	if !ok {
		return nil, v.fail(key, "must be an array of strings, not %s", jsonTypeName(x))
	}
	out := make([]string, len(a))
	for i, e := range a {
		s, err := v.str(fmt.Sprintf("%s[%d]", key, i), e)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func (v profileValidator) oneOf(key string, x any, valid []string) error {
	s, err := v.str(key, x)
	if err != nil {
		return err
	}
	if !hasString(valid, s) {
		return v.fail(key, "unknown value %q (want one of %s)", s, strings.Join(valid, ", "))
	}
	return nil
}

func (v profileValidator) boolean(key string, x any) error {
	if _, ok := x.(bool); !ok {
		return v.fail(key, "must be true or false, not %s", jsonTypeName(x))
	}
	return nil
}

// objects walks x, an optional array of objects whose keys are all
// allowed, calling each with the element's key ("name[i]") and its object.
// A nil x (the key is absent) is valid.
func (v profileValidator) objects(key string, x any, each func(key string, m map[string]any) error, allowed ...string) error {
	if x == nil {
		return nil
	}
	a, ok := x.([]any)
	if !ok {
		return v.fail(key, "must be an array, not %s", jsonTypeName(x))
	}
	for i, r := range a {
		k := fmt.Sprintf("%s[%d]", key, i)
		m, err := v.object(k, r, allowed...)
		if err != nil {
			return err
		}
		if err := each(k, m); err != nil {
			return err
		}
	}
	return nil
}

// requiredStrings checks that each of names is in m as a non-empty string.
func (v profileValidator) requiredStrings(key string, m map[string]any, names ...string) error {
	for _, k := range names {
		x, ok := m[k]
		if !ok {
			return v.fail(key+"."+k, "is required")
		}
		if s, err := v.str(key+"."+k, x); err != nil {
			return err
		} else if s == "" {
			return v.fail(key+"."+k, "must not be empty")
		}
	}
	return nil
}

// requiredPhrases checks that m holds name as a non-empty list of strings.
func (v profileValidator) requiredPhrases(key string, m map[string]any, name string) error {
	x, ok := m[name]
	if !ok {
		return v.fail(key+"."+name, "is required")
	}
	ps, err := v.strings(key+"."+name, x)
	if err != nil {
		return err
	}
	if len(ps) == 0 {
		return v.fail(key+"."+name, "must not be empty")
	}
	return nil
}

// optional checks with check each of names that m holds.
func (v profileValidator) optional(key string, m map[string]any, check func(key string, x any) error, names ...string) error {
	for _, k := range names {
		if x, ok := m[k]; ok {
			if err := check(key+"."+k, x); err != nil {
				return err
			}
		}
	}
	return nil
}

// isStr and isStrings adapt str and strings to optional's check.
func (v profileValidator) isStr(key string, x any) error {
	_, err := v.str(key, x)
	return err
}

func (v profileValidator) isStrings(key string, x any) error {
	_, err := v.strings(key, x)
	return err
}

// toolList checks m's required, non-empty "tools" list.
func (v profileValidator) toolList(key string, m map[string]any) error {
	x, ok := m["tools"]
	if !ok {
		return v.fail(key+".tools", "is required")
	}
	if ts, err := v.strings(key+".tools", x); err != nil {
		return err
	} else if len(ts) == 0 {
		return v.fail(key+".tools", "must not be empty")
	}
	return nil
}

func jsonTypeName(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", x)
}

func hasString(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func (v profileValidator) document(doc any) error {
	top, err := v.object("", doc, "name", "version", "description", "domains", "tools_given", "authored", "schemas",
		"tools", "kinds", "knowledge", "errors", "workflow", "choice", "choice_actions", "success", "weak", "policy_claims", "allowances", "compensations", "charges", "same_day", "original_payment", "upcoming_total", "item_options", "record_facts", "quoted_phrases")
	if err != nil {
		return err
	}
	if x, ok := top["quoted_phrases"]; ok {
		if err := v.boolean("quoted_phrases", x); err != nil {
			return err
		}
	}
	if err := v.compensations(top["compensations"]); err != nil {
		return err
	}
	err = v.objects("charges", top["charges"], func(key string, m map[string]any) error {
		if err := v.toolList(key, m); err != nil {
			return err
		}
		if err := v.optional(key, m, v.isStr, "method"); err != nil {
			return err
		}
		return v.requiredStrings(key, m, "history", "amount")
	}, "tools", "history", "amount", "method")
	if err != nil {
		return err
	}
	err = v.objects("same_day", top["same_day"], func(key string, m map[string]any) error {
		if err := v.requiredStrings(key, m, "field", "dates"); err != nil {
			return err
		}
		if err := v.requiredPhrases(key, m, "claims"); err != nil {
			return err
		}
		if err := v.optional(key, m, v.isStr, "status"); err != nil {
			return err
		}
		if err := v.optional(key, m, v.isStrings, "closed", "none"); err != nil {
			return err
		}
		if _, ok := m["closed"]; ok && m["status"] == nil {
			return v.fail(key+".closed", "needs status: the field whose value closes a record")
		}
		return nil
	}, "field", "dates", "status", "closed", "claims", "none")
	if err != nil {
		return err
	}
	err = v.objects("original_payment", top["original_payment"], func(key string, m map[string]any) error {
		if err := v.requiredStrings(key, m, "field", "history", "method"); err != nil {
			return err
		}
		return v.requiredPhrases(key, m, "phrases")
	}, "field", "history", "method", "phrases")
	if err != nil {
		return err
	}
	if x, ok := top["item_options"]; ok {
		m, err := v.object("item_options", x, "id", "options")
		if err != nil {
			return err
		}
		if err := v.requiredStrings("item_options", m, "id", "options"); err != nil {
			return err
		}
	}
	err = v.objects("upcoming_total", top["upcoming_total"], func(key string, m map[string]any) error {
		if err := v.requiredStrings(key, m, "field", "dates", "history", "amount"); err != nil {
			return err
		}
		return v.requiredPhrases(key, m, "phrases")
	}, "field", "dates", "history", "amount", "phrases")
	if err != nil {
		return err
	}
	err = v.objects("record_facts", top["record_facts"], func(key string, m map[string]any) error {
		if err := v.requiredStrings(key, m, "field", "key", "value"); err != nil {
			return err
		}
		return v.requiredPhrases(key, m, "phrases")
	}, "field", "key", "value", "phrases")
	if err != nil {
		return err
	}
	if err := v.policyClaims(top["policy_claims"]); err != nil {
		return err
	}
	if err := v.allowances(top["allowances"]); err != nil {
		return err
	}
	for _, k := range []string{"name", "version"} {
		x, ok := top[k]
		if !ok {
			return v.fail(k, "is required")
		}
		s, err := v.str(k, x)
		if err != nil {
			return err
		}
		if strings.TrimSpace(s) == "" {
			return v.fail(k, "must not be empty")
		}
	}
	if x, ok := top["description"]; ok {
		if _, err := v.str("description", x); err != nil {
			return err
		}
	}
	if x, ok := top["domains"]; ok {
		if _, err := v.strings("domains", x); err != nil {
			return err
		}
	}
	for _, key := range []string{"tools_given", "authored"} {
		if x, ok := top[key]; ok {
			if err := v.boolean(key, x); err != nil {
				return err
			}
		}
	}
	if x, ok := top["schemas"]; ok {
		a, ok := x.([]any)
		if !ok {
			return v.fail("schemas", "must be an array of tool schemas, not %s", jsonTypeName(x))
		}
		seen := map[string]bool{}
		for i, e := range a {
			key := fmt.Sprintf("schemas[%d]", i)
			m, err := v.object(key, e, "name", "description", "parameters")
			if err != nil {
				return err
			}
			name, err := v.str(key+".name", m["name"])
			if err != nil {
				return err
			}
			if seen[name] {
				return v.fail(key+".name", "duplicate schema %q", name)
			}
			seen[name] = true
			if p, ok := m["parameters"]; ok {
				if _, err := v.object(key+".parameters", p); err != nil {
					return err
				}
			}
		}
	}
	kinds := map[string]any{}
	if x, ok := top["kinds"]; ok {
		m, err := v.object("kinds", x)
		if err != nil {
			return err
		}
		kinds = m
		for name, k := range m {
			key := profileKey("kinds", name)
			km, err := v.object(key, k, "paths", "choice", "in_text", "record", "contradict", "record_phrases")
			if err != nil {
				return err
			}
			paths, ok := km["paths"]
			if !ok {
				return v.fail(key+".paths", "is required")
			}
			ps, err := v.strings(key+".paths", paths)
			if err != nil {
				return err
			}
			for i, p := range ps {
				if err := checkPathPattern(p); err != nil {
					return v.fail(fmt.Sprintf("%s.paths[%d]", key, i), "%v", err)
				}
			}
			for _, b := range []string{"choice", "in_text", "record"} {
				if x, ok := km[b]; ok {
					if err := v.boolean(key+"."+b, x); err != nil {
						return err
					}
				}
			}
			for _, f := range []string{"contradict", "record_phrases"} {
				if x, ok := km[f]; ok {
					if _, err := v.strings(key+"."+f, x); err != nil {
						return err
					}
				}
			}
		}
	}
	knowledge := map[string]any{}
	if x, ok := top["knowledge"]; ok {
		m, err := v.object("knowledge", x)
		if err != nil {
			return err
		}
		knowledge = m
		for name, table := range m {
			key := profileKey("knowledge", name)
			tm, err := v.object(key, table)
			if err != nil {
				return err
			}
			for val, aliases := range tm {
				if _, err := v.strings(profileKey(key, val), aliases); err != nil {
					return err
				}
			}
		}
	}
	if x, ok := top["tools"]; ok {
		m, err := v.object("tools", x)
		if err != nil {
			return err
		}
		for name, t := range m {
			key := profileKey("tools", name)
			tm, err := v.object(key, t, "action", "args")
			if err != nil {
				return err
			}
			a, ok := tm["action"]
			if !ok {
				return v.fail(key+".action", "is required")
			}
			if err := v.oneOf(key+".action", a, validActions); err != nil {
				return err
			}
			if args, ok := tm["args"]; ok {
				am, err := v.object(key+".args", args)
				if err != nil {
					return err
				}
				for path, spec := range am {
					akey := profileKey(key+".args", path)
					if err := checkArgPath(path); err != nil {
						return v.fail(akey, "%v", err)
					}
					if s, ok := spec.(string); ok {
						if err := v.oneOf(akey, s, validRoles); err != nil {
							return err
						}
						continue
					}
					sm, err := v.object(akey, spec, "role", "kind", "knowledge", "user_choice")
					if err != nil {
						return err
					}
					r, ok := sm["role"]
					if !ok {
						return v.fail(akey+".role", "is required")
					}
					if err := v.oneOf(akey+".role", r, validRoles); err != nil {
						return err
					}
					if k, ok := sm["kind"]; ok {
						s, err := v.str(akey+".kind", k)
						if err != nil {
							return err
						}
						if _, ok := kinds[s]; !ok {
							return v.fail(akey+".kind", "names no entry of kinds: %q", s)
						}
					}
					if k, ok := sm["knowledge"]; ok {
						s, err := v.str(akey+".knowledge", k)
						if err != nil {
							return err
						}
						if _, ok := knowledge[s]; !ok {
							return v.fail(akey+".knowledge", "names no entry of knowledge: %q", s)
						}
					}
					if x, ok := sm["user_choice"]; ok {
						if err := v.boolean(akey+".user_choice", x); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	if x, ok := top["errors"]; ok {
		m, err := v.object("errors", x, "prefixes", "patterns")
		if err != nil {
			return err
		}
		if p, ok := m["prefixes"]; ok {
			if _, err := v.strings("errors.prefixes", p); err != nil {
				return err
			}
		}
		if p, ok := m["patterns"]; ok {
			ps, err := v.strings("errors.patterns", p)
			if err != nil {
				return err
			}
			for i, s := range ps {
				if _, err := regexp.Compile(s); err != nil {
					return v.fail(fmt.Sprintf("errors.patterns[%d]", i), "invalid regular expression: %v", err)
				}
			}
		}
	}
	if x, ok := top["workflow"]; ok {
		m, err := v.object("workflow", x, "order", "confirm", "conditions")
		if err != nil {
			return err
		}
		if o, ok := m["order"]; ok {
			a, ok := o.([]any)
			if !ok {
				return v.fail("workflow.order", "must be an array of rules, not %s", jsonTypeName(o))
			}
			for i, r := range a {
				key := fmt.Sprintf("workflow.order[%d]", i)
				rm, err := v.object(key, r, "tools", "arg", "after", "after_arg", "after_output", "level")
				if err != nil {
					return err
				}
				for _, req := range []string{"tools", "arg", "after"} {
					if _, ok := rm[req]; !ok {
						return v.fail(key+"."+req, "is required")
					}
				}
				if _, err := v.strings(key+".tools", rm["tools"]); err != nil {
					return err
				}
				if _, err := v.strings(key+".after", rm["after"]); err != nil {
					return err
				}
				if _, err := v.str(key+".arg", rm["arg"]); err != nil {
					return err
				}
				if x, ok := rm["after_arg"]; ok {
					if _, err := v.str(key+".after_arg", x); err != nil {
						return err
					}
				}
				if x, ok := rm["after_output"]; ok {
					if _, err := v.strings(key+".after_output", x); err != nil {
						return err
					}
				}
				if x, ok := rm["level"]; ok {
					if err := v.oneOf(key+".level", x, []string{"trajectory", "decision"}); err != nil {
						return err
					}
				}
			}
		}
		if err := v.conditions(m["conditions"]); err != nil {
			return err
		}
		if c, ok := m["confirm"]; ok {
			cm, err := v.object("workflow.confirm", c, "actions", "tools", "except", "level", "yes", "no", "priced", "unpriced")
			if err != nil {
				return err
			}
			if _, ok := cm["actions"]; !ok {
				return v.fail("workflow.confirm.actions", "is required")
			}
			acts, err := v.strings("workflow.confirm.actions", cm["actions"])
			if err != nil {
				return err
			}
			for i, a := range acts {
				if !hasString(validActions, a) {
					return v.fail(fmt.Sprintf("workflow.confirm.actions[%d]", i), "unknown action %q (want one of %s)", a, strings.Join(validActions, ", "))
				}
			}
			if err := v.optional("workflow.confirm", cm, v.isStrings, "tools", "except", "yes", "no", "priced", "unpriced"); err != nil {
				return err
			}
			if x, ok := cm["level"]; ok {
				if err := v.oneOf("workflow.confirm.level", x, []string{"trajectory", "decision"}); err != nil {
					return err
				}
			}
		}
	}
	if x, ok := top["choice"]; ok {
		if err := v.oneOf("choice", x, []string{"queue", "fail"}); err != nil {
			return err
		}
	}
	if x, ok := top["choice_actions"]; ok {
		acts, err := v.strings("choice_actions", x)
		if err != nil {
			return err
		}
		for i, a := range acts {
			if !hasString(validActions, a) {
				return v.fail(fmt.Sprintf("choice_actions[%d]", i), "unknown action %q (want one of %s)", a, strings.Join(validActions, ", "))
			}
		}
	}
	if x, ok := top["success"]; ok {
		m, err := v.object("success", x, "reward_threshold")
		if err != nil {
			return err
		}
		if r, ok := m["reward_threshold"]; ok {
			if _, ok := r.(json.Number); !ok {
				return v.fail("success.reward_threshold", "must be a number, not %s", jsonTypeName(r))
			}
		}
	}
	if x, ok := top["weak"]; ok {
		m, err := v.object("weak", x, "max_int", "tokens")
		if err != nil {
			return err
		}
		if r, ok := m["max_int"]; ok {
			n, ok := r.(json.Number)
			if !ok {
				return v.fail("weak.max_int", "must be a number, not %s", jsonTypeName(r))
			}
			if i, err := n.Int64(); err != nil || i < 0 || i > 1000 {
				return v.fail("weak.max_int", "must be an integer between 0 and 1000, not %s", n)
			}
		}
		if t, ok := m["tokens"]; ok {
			if _, err := v.strings("weak.tokens", t); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkArgPath accepts a.b, a[*].b, a[0]: keys separated by dots, [*] or
// [n] after a key.
func checkArgPath(p string) error {
	if p == "" {
		return errors.New("empty argument path")
	}
	for _, part := range strings.Split(p, ".") {
		if part == "" {
			return errors.New("empty segment in argument path")
		}
		name := part
		if k := strings.IndexByte(part, '['); k >= 0 {
			name = part[:k]
			rest := part[k:]
			for rest != "" {
				e := strings.IndexByte(rest, ']')
				if rest[0] != '[' || e < 0 {
					return fmt.Errorf("malformed index in %q", part)
				}
				idx := rest[1:e]
				if idx != "*" && !onlyDigits(idx) {
					return fmt.Errorf("index must be [*] or a number in %q", part)
				}
				rest = rest[e+1:]
			}
		}
		if name == "" && part == p[:len(part)] && !strings.HasPrefix(p, "[") {
			return fmt.Errorf("missing key before index in %q", part)
		}
	}
	return nil
}

// checkPathPattern accepts kind path patterns: segments separated by dots,
// "*" for one key or index, "**" as the first segment for any prefix, and
// [*] after a key.
func checkPathPattern(p string) error {
	if p == "" {
		return errors.New("empty path pattern")
	}
	for i, part := range splitPattern(p) {
		if part == "" {
			return errors.New("empty segment in path pattern")
		}
		if part == "**" && i != 0 {
			return errors.New(`"**" may only start a path pattern`)
		}
	}
	return nil
}

// splitPattern splits "payment_methods.*" and "reservations[*]" and
// "**.flight_number" into segments; "[*]" becomes "*".
func splitPattern(p string) []string {
	p = strings.ReplaceAll(p, "[*]", ".*")
	p = strings.TrimPrefix(p, ".")
	return strings.Split(p, ".")
}

// conditions checks workflow.conditions (nil when absent).
func (v profileValidator) conditions(x any) error {
	return v.objects("workflow.conditions", x, func(key string, rm map[string]any) error {
		if x, ok := rm["route"]; ok {
			ro, err := v.object(key+".route", x, "flights", "origin", "destination", "trip", "of_call")
			if err != nil {
				return err
			}
			if _, ok := ro["flights"]; !ok {
				return v.fail(key+".route.flights", "is required")
			}
			if err := v.optional(key+".route", ro, v.isStr, "flights", "origin", "destination", "trip"); err != nil {
				return err
			}
			if err := v.optional(key+".route", ro, v.boolean, "of_call"); err != nil {
				return err
			}
		}
		ofCall := false
		if ro, ok := rm["route"].(map[string]any); ok {
			ofCall = ro["of_call"] == true
		}
		for _, req := range []string{"tools", "arg"} {
			if _, ok := rm[req]; !ok && !(req == "arg" && ofCall) {
				return v.fail(key+"."+req, "is required")
			}
		}
		if err := v.optional(key, rm, v.isStrings, "tools"); err != nil {
			return err
		}
		if err := v.optional(key, rm, v.isStr, "arg", "rule", "unless_past", "describe"); err != nil {
			return err
		}
		if x, ok := rm["within"]; ok {
			wm, err := v.object(key+".within", x, "field", "hours")
			if err != nil {
				return err
			}
			if _, err := v.str(key+".within.field", wm["field"]); err != nil {
				return err
			}
			n, ok := wm["hours"].(json.Number)
			if h, err := n.Float64(); !ok || err != nil || h <= 0 {
				return v.fail(key+".within.hours", "must be a positive number")
			}
		}
		if x, ok := rm["claims"]; ok {
			cm, err := v.object(key+".claims", x, "allowed", "denied")
			if err != nil {
				return err
			}
			if err := v.optional(key+".claims", cm, v.isStrings, "allowed", "denied"); err != nil {
				return err
			}
		}
		return v.objects(key+".allow", rm["allow"], func(ak string, am map[string]any) error {
			if _, ok := am["field"]; !ok {
				if _, ok := am["user_words"]; !ok {
					return v.fail(ak, "needs field or user_words")
				}
			}
			if x, ok := am["field"]; ok {
				if _, err := v.str(ak+".field", x); err != nil {
					return err
				}
				if _, ok := am["values"]; !ok {
					return v.fail(ak+".values", "is required with field")
				}
			}
			return v.optional(ak, am, v.isStrings, "values", "user_words")
		}, "field", "values", "user_words")
	}, "tools", "arg", "rule", "within", "allow", "claims", "unless_past", "describe", "route")
}

// allowances checks allowances (nil when absent).
func (v profileValidator) allowances(x any) error {
	return v.objects("allowances", x, func(key string, m map[string]any) error {
		if err := v.toolList(key, m); err != nil {
			return err
		}
		if err := v.requiredStrings(key, m, "total", "charged", "per", "class", "tier_of", "tier"); err != nil {
			return err
		}
		if err := v.optional(key, m, v.isStr, "record", "rule"); err != nil {
			return err
		}
		if err := v.optional(key, m, v.isStrings, "items"); err != nil {
			return err
		}
		if _, ok := m["free"]; !ok {
			return v.fail(key+".free", "is required")
		}
		free, err := v.object(key+".free", m["free"])
		if err != nil {
			return err
		}
		if len(free) == 0 {
			return v.fail(key+".free", "must map each tier to its free count per class")
		}
		for _, tier := range slices.Sorted(maps.Keys(free)) {
			tkey := profileKey(key+".free", tier)
			classes, err := v.object(tkey, free[tier])
			if err != nil {
				return err
			}
			for _, class := range slices.Sorted(maps.Keys(classes)) {
				num, ok := classes[class].(json.Number)
				k, err := num.Int64()
				if !ok || err != nil || k < 0 {
					return v.fail(profileKey(tkey, class), "must be a whole number of free items, at least 0")
				}
			}
		}
		return nil
	}, "tools", "total", "charged", "record", "per", "class", "tier_of", "tier", "free", "rule", "items")
}

// compensations checks compensations (nil when absent).
func (v profileValidator) compensations(x any) error {
	return v.objects("compensations", x, func(key string, m map[string]any) error {
		if err := v.toolList(key, m); err != nil {
			return err
		}
		if err := v.requiredStrings(key, m, "amount", "owner", "record", "per"); err != nil {
			return err
		}
		if err := v.optional(key, m, v.isStr, "rule"); err != nil {
			return err
		}
		if cases, ok := m["cases"].([]any); !ok || len(cases) == 0 {
			return v.fail(key+".cases", "must be a non-empty array of cases")
		}
		err := v.objects(key+".cases", m["cases"], func(ck string, cm map[string]any) error {
			if err := v.requiredStrings(ck, cm, "name"); err != nil {
				return err
			}
			num, ok := cm["unit"].(json.Number)
			f, err := num.Float64()
			if !ok || err != nil || f <= 0 {
				return v.fail(ck+".unit", "must be a positive amount per head")
			}
			return v.optional(ck, cm, v.isStrings, "after")
		}, "name", "unit", "after")
		if err != nil {
			return err
		}
		return v.objects(key+".eligible", m["eligible"], func(ek string, em map[string]any) error {
			if err := v.requiredStrings(ek, em, "field"); err != nil {
				return err
			}
			if x, ok := em["of"]; ok {
				if s, err := v.str(ek+".of", x); err != nil {
					return err
				} else if s != "record" && s != "owner" {
					return v.fail(ek+".of", "must be \"record\" or \"owner\", not %q", s)
				}
			}
			if vs, err := v.strings(ek+".values", em["values"]); err != nil {
				return err
			} else if len(vs) == 0 {
				return v.fail(ek+".values", "must not be empty")
			}
			return nil
		}, "field", "of", "values")
	}, "tools", "amount", "owner", "record", "per", "cases", "eligible", "rule")
}

// policyClaims checks policy_claims (nil when absent).
func (v profileValidator) policyClaims(x any) error {
	return v.objects("policy_claims", x, func(key string, m map[string]any) error {
		all, ok := m["all"].([]any)
		if !ok || len(all) == 0 {
			return v.fail(key+".all", "must be a non-empty array of phrase lists")
		}
		for j, g := range all {
			ps, err := v.strings(fmt.Sprintf("%s.all[%d]", key, j), g)
			if err != nil {
				return err
			}
			if len(ps) == 0 {
				return v.fail(fmt.Sprintf("%s.all[%d]", key, j), "must not be empty")
			}
		}
		if err := v.optional(key, m, v.isStrings, "unless", "unless_reply", "unless_user", "with", "with_user", "unless_result", "unless_after"); err != nil {
			return err
		}
		if err := v.optional(key, m, v.boolean, "statements", "questions", "asks", "fact", "contradicts_tools", "fails", "transfer", "with_user_any", "replies_only", "transfer_only"); err != nil {
			return err
		}
		if m["with_user_any"] == true && m["with_user"] == nil {
			return v.fail(key+".with_user_any", "needs with_user: the phrases some earlier user message must say")
		}
		if m["statements"] == true && m["questions"] == true {
			return v.fail(key+".questions", "cannot be true with statements: a claim counts statements only, questions only, or both")
		}
		_, err := v.str(key+".note", m["note"])
		return err
	}, "all", "unless", "unless_reply", "unless_user", "with", "with_user", "with_user_any", "unless_result", "unless_after", "statements", "questions", "asks", "fact", "contradicts_tools", "fails", "transfer", "replies_only", "transfer_only", "note")
}
