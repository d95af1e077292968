package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"groundwork/grounding"
)

// Page sizes of Trajectories.
const (
	defaultPageSize = 50
	maxPageSize     = 500
)

type summaryRow struct {
	ID          int64           `db:"id"`
	RunID       int64           `db:"run_id"`
	ExtID       string          `db:"ext_id"`
	ParentID    string          `db:"parent_id"`
	Domain      string          `db:"domain"`
	Success     bool            `db:"success"`
	Reward      sql.NullFloat64 `db:"reward"`
	Messages    int             `db:"n_messages"`
	Decisions   int             `db:"n_decisions"`
	ToolCalls   int             `db:"n_tool_calls"`
	Errors      int             `db:"n_errors"`
	SourceFile  string          `db:"source_file"`
	SourceIndex int             `db:"source_index"`
	SourceLine  int             `db:"source_line"`
	WorkflowOK  bool            `db:"workflow_ok"`
	Certified   bool            `db:"certified"`
	Pass        int             `db:"n_pass"`
	Fail        int             `db:"n_fail"`
	Ambiguous   int             `db:"n_ambiguous"`
	Queued      int             `db:"n_queued"`
	Supervised  int             `db:"n_supervised"`
	// FirstMatch is read by filtered lists only (Trajectories).
	FirstMatch sql.NullInt32 `db:"first_match"`
}

const summaryColumns = `t.id, t.run_id, t.ext_id, t.parent_id, t.domain, t.success, t.reward,
	t.n_messages, t.n_decisions, t.n_tool_calls, t.n_errors, t.source_file, t.source_index, t.source_line,
	t.workflow_ok, t.certified, t.n_pass, t.n_fail, t.n_ambiguous, t.n_queued, t.n_supervised`

func (r summaryRow) summary() grounding.TrajectorySummary {
	s := grounding.TrajectorySummary{
		ID: r.ID, RunID: r.RunID, ExtID: r.ExtID, ParentID: r.ParentID, Domain: r.Domain,
		Success: r.Success, Messages: r.Messages, Decisions: r.Decisions, ToolCalls: r.ToolCalls,
		Errors: r.Errors, SourceFile: r.SourceFile, SourceIndex: r.SourceIndex, SourceLine: r.SourceLine,
		WorkflowOK: r.WorkflowOK, Certified: r.Certified, Pass: r.Pass, Fail: r.Fail,
		Ambiguous: r.Ambiguous, Queued: r.Queued, Supervised: r.Supervised,
	}
	if r.Reward.Valid {
		v := r.Reward.Float64
		s.Reward = &v
	}
	if r.FirstMatch.Valid {
		m := int(r.FirstMatch.Int32)
		s.Match = &m
	}
	return s
}

type headerRow struct {
	summaryRow
	RunName string `db:"run_name"`
	Request string `db:"request"`
	Tools   []byte `db:"tools"`
	Hidden  []byte `db:"hidden"`
	Meta    []byte `db:"meta"`
	Format  string `db:"format"`

	CheckedAt     nullTime `db:"checked_at"`
	EngineVersion string   `db:"engine_version"`
	Profile       string   `db:"profile"`
	FlowReasons   []byte   `db:"flow_reasons"`
	Violations    []byte   `db:"violations"`
}

func (r headerRow) header() (grounding.TrajectoryHeader, error) {
	h := grounding.TrajectoryHeader{
		TrajectorySummary: r.summary(),
		RunName:           r.RunName,
		Request:           r.Request,
		Format:            r.Format,
		EngineVersion:     r.EngineVersion,
		Profile:           r.Profile,
		CheckedAt:         r.CheckedAt.Time,
	}
	if err := decodeJSON(r.FlowReasons, &h.FlowReasons); err != nil {
		return h, fmt.Errorf("decode flow reasons: %w", err)
	}
	if err := decodeJSON(r.Violations, &h.Violations); err != nil {
		return h, fmt.Errorf("decode violations: %w", err)
	}
	if err := decodeJSON(r.Tools, &h.Tools); err != nil {
		return h, fmt.Errorf("decode tools: %w", err)
	}
	if err := decodeJSON(r.Hidden, &h.Hidden); err != nil {
		return h, fmt.Errorf("decode hidden: %w", err)
	}
	if len(h.Tools) == 0 {
		h.Tools = nil
	}
	if len(h.Hidden) == 0 {
		h.Hidden = nil
	}
	if len(r.Meta) > 0 {
		h.Meta = r.Meta
	}
	return h, nil
}

const (
	headerColumns = summaryColumns + `, r.name AS run_name, t.request, t.tools, t.hidden, t.meta, t.format,
	t.checked_at, t.engine_version, t.profile, t.flow_reasons, t.violations`
	headerFrom  = ` FROM trajectories t JOIN runs r ON r.id = t.run_id`
	headerQuery = `SELECT ` + headerColumns + headerFrom
)

// Trajectories returns one page of a run's trajectories matching f, in the
// natural order of their ext ids (task2 before task10; see naturalKey).
// Paging is keyset (after f.After in that order), never OFFSET, and nothing
// is counted. Limit defaults to 50 and is capped at 500. Search matches a
// case-insensitive substring of the ext id (ASCII letters fold under SQLite);
// Tool, Verdict and Reason keep trajectories with one decision that meets
// all that are given, and each row's Match is the first such decision.
// Next is the last row's ext id when another page follows, else "". An
// unknown run gives an empty page.
func (db *DB) Trajectories(ctx context.Context, f grounding.TrajectoryFilter) (grounding.TrajectoryPage, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = defaultPageSize
	}
	limit = min(limit, maxPageSize)

	where := []string{"t.run_id = ?"}
	args := []any{f.RunID}
	if f.Success != nil {
		where = append(where, "t.success = ?")
		args = append(args, *f.Success)
	}
	if f.Domain != "" {
		where = append(where, "t.domain = ?")
		args = append(args, f.Domain)
	}
	// Tool, verdict and reason are conditions on one decision: with two or
	// more of them a trajectory matches when one of its decisions meets all
	// (tool=think&verdict=ambiguous is "an ambiguous think", not "a think
	// and, elsewhere, something ambiguous"). A verdict alone is read from
	// the trajectory's counters, which also narrow the rows probed when it
	// comes with a tool or a reason.
	counter := map[grounding.Verdict]string{grounding.VerdictPass: "t.n_pass > 0",
		grounding.VerdictFail: "t.n_fail > 0", grounding.VerdictAmbiguous: "t.n_ambiguous > 0"}[grounding.Verdict(f.Verdict)]
	if counter != "" {
		where = append(where, counter)
	}
	if f.Search != "" {
		where = append(where, db.d.extIDContains)
		args = append(args, "%"+escapeLike(f.Search)+"%")
	}
	if f.After != "" {
		where = append(where, "(t.sort_key, t.ext_id) > (?, ?)")
		args = append(args, naturalKey(f.After), f.After)
	}
	match, ord, matchArgs := decisionMatch(f, "t")
	cols := summaryColumns
	if match != "" {
		// The first decision that meets the filter, for the row's link: a
		// probe of one trajectory's decisions for each row of the page.
		cols += `, (SELECT MIN(` + ord + `) FROM ` + match + `) AS first_match`
	}
	// read runs the page's query over from (which binds fromArgs) with the
	// conditions above and cond. One row more than the page tells whether
	// a next page exists.
	read := func(from string, fromArgs []any, cond string, condArgs []any) ([]summaryRow, error) {
		w := where
		if cond != "" {
			w = append(w[:len(w):len(w)], cond)
		}
		q := `SELECT ` + cols + ` FROM ` + from + ` WHERE ` + strings.Join(w, " AND ") +
			` ORDER BY t.sort_key, t.ext_id` + limitSQL(limit+1)
		rows := make([]summaryRow, 0, limit+1) // sized once, not grown row by row
		err := db.sel(ctx, &rows, q, slices.Concat(matchArgs, fromArgs, args, condArgs)...)
		return rows, err
	}
	var rows []summaryRow
	var err error
	nonPass := f.Verdict != "" && f.Verdict != string(grounding.VerdictPass)
	switch {
	case match == "" || (counter != "" && f.Tool == "" && f.Reason == ""):
		rows, err = read("trajectories t", nil, "", nil)
	case nonPass && f.Reason == "":
		// A tool's decisions that did not pass are few (one decision in
		// 25 did not pass on generated pools) and indexed by run, verdict
		// and tool (decisions_run_unsettled_idx): find the trajectories
		// from them, probed from a walk of the run's order index.
		// tool=get_line_details&verdict=fail, 2,156 matches among 50,000
		// trajectories: SQLite 113 ms walking, 9 ms so; Postgres 56 -> 13.
		// (decisionPage took 94 ms on SQLite: over listMax, its walk
		// window then its list.)
		inRun, _, inArgs := decisionMatch(f, "")
		rows, err = read("trajectories t", nil, "t.id IN (SELECT d.trajectory_id FROM "+inRun+")", append(inArgs, f.RunID))
	case db.d.name == "postgres" && f.Tool == "" && nonPass:
		// A reason with fail or ambiguous: Postgres' walk finds a common
		// one's page early (reason=term.failed&verdict=fail 5 ms), where
		// decisionPage's bounded window took 68-79 ms; a rare one
		// (vis.contradiction&verdict=fail) walks in 10 ms.
		rows, err = read("trajectories t", nil, "EXISTS (SELECT 1 FROM "+match+")", matchArgs)
	case db.d.name == "postgres" && f.Reason == "":
		// Postgres keeps its walk for a tool with or without pass (0.6 ms for
		// a common one). decisionPage's counts and bounds cost more there
		// (cancel_reservation&verdict=pass 0.6 -> 48 ms, measured under
		// load); a tool late in page order still walks (tool=cancel_line
		// 100 ms).
		rows, err = read("trajectories t", nil, "EXISTS (SELECT 1 FROM "+match+")", matchArgs)
	default:
		rows, err = db.decisionPage(ctx, f, limit, decisionWalk{match, matchArgs, where, args}, read)
	}
	if err != nil {
		return grounding.TrajectoryPage{}, storeErr(fmt.Sprintf("list trajectories of run %d", f.RunID), err)
	}
	var page grounding.TrajectoryPage
	if len(rows) > limit {
		rows = rows[:limit]
		page.Next = rows[limit-1].ExtID
	}
	page.Rows = make([]grounding.TrajectorySummary, len(rows))
	for i, r := range rows {
		page.Rows[i] = r.summary()
	}
	return page, nil
}

// Bounds of decisionPage's choice between a list and a walk.
const (
	// listMax: a list that starts from fewer decisions (index entries)
	// than this is read without trying a walk first.
	listMax = 2000
	// walkWindow is how many of the run's trajectories, in page order
	// after the cursor, a walk probes before it gives way to the list.
	walkWindow = 1000
)

// decisionWalk is what decisionPage needs of Trajectories' filter: the
// per-trajectory probe (decisionMatch with "t") and the trajectory
// conditions, each with its arguments.
type decisionWalk struct {
	match     string
	matchArgs []any
	where     []string
	args      []any
}

// decisionList is one way to list a filter's decisions from an index:
// "SELECT tid FROM from WHERE conds" over the index, with join checking
// each entry for what the index does not hold.
type decisionList struct {
	tid, from, conds string
	args             []any
	join             string
	joinArgs         []any
}

// decisionPage reads a page of trajectories for a tool, a reason or a
// verdict with either. Two ways find them.
//
// A walk probes the run's trajectories in page order and stops at a full
// page: fast when matches are dense and early (reason=term.failed, 0.6
// ms), but it reads to the end of the run when they are rare or late.
// reason=vis.normalized&tool=cancel_line matches 2 of 50,000 trajectories:
// SQLite walked them all in 812 ms, Postgres in 1.7 s.
//
// A list starts from the matching decisions in an index and sorts their
// trajectories: its cost follows the entries it reads, wherever they fall
// in page order. The index is the narrowest of those that answer the
// filter, by a count capped at listMax: a verdict other than pass,
// decisions_run_unsettled_idx (run, verdict, tool); a reason,
// decision_reasons_run_tool_idx (run, reason, tool: a reason on a tool is
// one range); a tool alone, decisions_run_tool_idx. Each entry is checked
// by primary key for the rest (the reason, the verdict).
//
// Under listMax entries, the list. Else a walk of the run's next
// walkWindow trajectories, which is the page when it fills one or reaches
// the end of the run; else the list.
func (db *DB) decisionPage(ctx context.Context, f grounding.TrajectoryFilter, limit int, walk decisionWalk,
	read func(from string, fromArgs []any, cond string, condArgs []any) ([]summaryRow, error)) ([]summaryRow, error) {
	var lists []decisionList
	if f.Verdict != "" && f.Verdict != string(grounding.VerdictPass) {
		// The partial index's predicate is stated for generic plans.
		l := decisionList{tid: "d.trajectory_id", from: "decisions d",
			conds: "d.run_id = ? AND d.verdict = ? AND d.verdict <> 'pass'", args: []any{f.RunID, f.Verdict}}
		if f.Tool != "" {
			l.conds += " AND d.tool = ?"
			l.args = append(l.args, f.Tool)
		}
		if f.Reason != "" {
			// CROSS JOIN keeps the decisions first under SQLite.
			l.join = " CROSS JOIN decision_reasons dr WHERE dr.trajectory_id = d.trajectory_id AND dr.ordinal = d.ordinal AND dr.reason = ? AND "
			l.joinArgs = []any{f.Reason}
		}
		lists = append(lists, l)
	}
	if f.Reason != "" {
		l := decisionList{tid: "dr.trajectory_id", from: "decision_reasons dr",
			conds: "dr.run_id = ? AND dr.reason = ?", args: []any{f.RunID, f.Reason}}
		if f.Tool != "" {
			l.conds += " AND dr.tool = ?"
			l.args = append(l.args, f.Tool)
		}
		if f.Verdict != "" {
			l.join = " CROSS JOIN decisions d WHERE d.trajectory_id = dr.trajectory_id AND d.ordinal = dr.ordinal AND d.verdict = ? AND "
			l.joinArgs = []any{f.Verdict}
		}
		lists = append(lists, l)
	} else if f.Verdict == "" || f.Verdict == string(grounding.VerdictPass) {
		l := decisionList{tid: "d.trajectory_id", from: "decisions d",
			conds: "d.run_id = ? AND d.tool = ?", args: []any{f.RunID, f.Tool}}
		if f.Verdict != "" {
			l.join = " WHERE d.verdict = ? AND "
			l.joinArgs = []any{f.Verdict}
		}
		lists = append(lists, l)
	}
	best, fewest := lists[0], listMax+1
	for _, l := range lists {
		// The index's entries alone, without the checks of join.
		var n int
		if err := db.get(ctx, &n, `SELECT COUNT(*) FROM (SELECT 1 FROM `+l.from+` WHERE `+l.conds+limitSQL(listMax)+`) c`, l.args...); err != nil {
			return nil, err
		}
		if n < fewest {
			best, fewest = l, n
		}
	}
	list := func() ([]summaryRow, error) {
		q := best.tid + " FROM " + best.from + " WHERE " + best.conds
		if best.join != "" {
			q = best.tid + " FROM " + best.from + best.join + best.conds
		}
		// CROSS JOIN: the list first, then each trajectory by its key;
		// only the page's rows are read in full, and probed for their
		// first match, after the sort.
		page := `(SELECT t.id AS page_id FROM (SELECT DISTINCT ` + q + `) m CROSS JOIN trajectories t
			WHERE t.id = m.trajectory_id AND ` + strings.Join(walk.where, " AND ") +
			` ORDER BY t.sort_key, t.ext_id` + limitSQL(limit+1) + `) p CROSS JOIN trajectories t`
		return read(page, slices.Concat(best.joinArgs, best.args, walk.args), "t.id = p.page_id", nil)
	}
	if fewest < listMax {
		return list()
	}
	// The walk's window ends at the run's walkWindow-th trajectory after
	// the cursor, read from trajectories_run_order_idx; none when fewer
	// remain, and then the walk is the whole answer.
	bq := `SELECT t.sort_key, t.ext_id FROM trajectories t WHERE t.run_id = ?`
	bArgs := []any{f.RunID}
	if f.After != "" {
		bq += ` AND (t.sort_key, t.ext_id) > (?, ?)`
		bArgs = append(bArgs, naturalKey(f.After), f.After)
	}
	var bound []struct {
		Key string `db:"sort_key"`
		ID  string `db:"ext_id"`
	}
	window := walkWindow
	if f.Verdict != "" && f.Verdict != string(grounding.VerdictPass) {
		// The trajectory's counter (n_fail > 0) skips most of the window
		// unprobed: one trajectory in 20 has a decision that did not
		// pass. reason=term.failed&verdict=fail fills its page in the
		// first 2,075 trajectories: 6 ms walking, 50 from the list.
		window *= 10
	}
	if err := db.sel(ctx, &bound, bq+` ORDER BY t.sort_key, t.ext_id`+limitSQL(1)+` OFFSET `+strconv.Itoa(window-1), bArgs...); err != nil {
		return nil, err
	}
	cond, condArgs := "EXISTS (SELECT 1 FROM "+walk.match+")", walk.matchArgs
	if len(bound) == 1 {
		cond += " AND (t.sort_key, t.ext_id) <= (?, ?)"
		condArgs = append(condArgs[:len(condArgs):len(condArgs)], bound[0].Key, bound[0].ID)
	}
	rows, err := read("trajectories t", nil, cond, condArgs)
	if err != nil || len(rows) > limit || len(bound) == 0 {
		return rows, err
	}
	return list()
}

// decisionMatch is what a trajectory filter asks of the decisions of a
// trajectory: one decision with the filter's tool, verdict and reason
// code, all that are given. It returns the FROM and WHERE of a subquery
// over such decisions, their ordinal column and its arguments; from is ""
// when the filter names none of the three. With traj "t" the subquery is
// about the decisions of trajectory t; with "" it is about every decision
// of a run, and its last condition is "run_id = ?" (the caller appends the
// run's id to args).
func decisionMatch(f grounding.TrajectoryFilter, traj string) (from, ord string, args []any) {
	if f.Tool == "" && f.Verdict == "" && f.Reason == "" {
		return "", "", nil
	}
	var conds []string
	alias := "d"
	if f.Reason != "" {
		// Reasons lead: their index (run_id, reason, trajectory_id) finds
		// the decisions, whose primary key then gives tool and verdict.
		// The reason's rows carry their decision's tool (migration
		// 00024), so only a verdict needs the decision itself.
		from, ord, alias = "decision_reasons dr", "dr.ordinal", "dr"
		if f.Verdict != "" {
			from += " JOIN decisions d ON d.trajectory_id = dr.trajectory_id AND d.ordinal = dr.ordinal"
		}
		conds = append(conds, "dr.reason = ?")
		args = append(args, f.Reason)
	} else {
		from, ord = "decisions d", "d.ordinal"
	}
	if traj != "" {
		if alias == "dr" {
			// By the primary key (trajectory_id, ordinal, reason): a
			// trajectory has a few reason rows. Given the run as well,
			// SQLite chose the covering decision_reasons_run_tool_idx
			// on (run_id, reason) alone and read every row of the reason
			// for each trajectory probed.
			conds = append(conds, "dr.trajectory_id = "+traj+".id")
		} else {
			conds = append(conds, "d.run_id = "+traj+".run_id", "d.trajectory_id = "+traj+".id")
		}
	}
	if f.Tool != "" {
		if f.Reason != "" {
			conds = append(conds, "dr.tool = ?")
		} else {
			conds = append(conds, "d.tool = ?")
		}
		args = append(args, f.Tool)
	}
	if f.Verdict != "" {
		conds = append(conds, "d.verdict = ?")
		args = append(args, f.Verdict)
		if f.Verdict != string(grounding.VerdictPass) && traj == "" {
			// Stated so the planner may use decisions_run_unsettled_idx
			// (partial: verdict <> 'pass') also in a generic plan, where
			// the bound verdict is unknown (migration 00023). Only for the
			// run-wide list, which should start there: Postgres counts the
			// redundant condition as more selectivity, and with a reason
			// (term.failed, fail) that underestimate made it start from
			// every failed decision (3.6 -> 40 ms).
			conds = append(conds, "d.verdict <> 'pass'")
		}
	}
	if traj == "" {
		conds = append(conds, alias+".run_id = ?")
	}
	return from + " WHERE " + strings.Join(conds, " AND "), ord, args
}

// limitSQL is " LIMIT n" with n written into the statement rather than
// bound as a parameter, for page reads kept prepared (DB.sel): Postgres
// reuses a generic plan only when it costs no more than planning each call,
// and with a bound LIMIT it costs the generic plan as if a tenth of the
// table came back, so it planned the queue list on every call (0.8 ms, for
// 0.4 ms of work). n is at most maxPageSize+1, which bounds the statement
// texts.
func limitSQL(n int) string { return " LIMIT " + strconv.Itoa(n) }

// escapeLike escapes the LIKE wildcards of s, with backslash as the escape.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// Trajectory returns the stored trajectory with this id, without its
// messages, or grounding.ErrNotFound.
func (db *DB) Trajectory(ctx context.Context, id int64) (grounding.TrajectoryHeader, error) {
	return db.trajectoryHeader(ctx, fmt.Sprintf("trajectory %d", id), headerQuery+` WHERE t.id = ?`, id)
}

// TrajectoryByExtID returns the trajectory of the run whose log id is extID,
// or grounding.ErrNotFound.
func (db *DB) TrajectoryByExtID(ctx context.Context, runID int64, extID string) (grounding.TrajectoryHeader, error) {
	return db.trajectoryHeader(ctx, fmt.Sprintf("trajectory %q of run %d", extID, runID),
		headerQuery+` WHERE t.run_id = ? AND t.ext_id = ?`, runID, extID)
}

func (db *DB) trajectoryHeader(ctx context.Context, op, q string, args ...any) (grounding.TrajectoryHeader, error) {
	var r headerRow
	if err := db.get(ctx, &r, q, args...); err != nil {
		return grounding.TrajectoryHeader{}, storeErr(op, err)
	}
	h, err := r.header()
	if err != nil {
		return grounding.TrajectoryHeader{}, fmt.Errorf("store: %s: %w", op, err)
	}
	return h, nil
}

type messageRow struct {
	Idx         int    `db:"idx"`
	Role        string `db:"role"`
	Content     string `db:"content"`
	ContentNull bool   `db:"content_null"`
	ToolCalls   []byte `db:"tool_calls"`
	ToolCallID  string `db:"tool_call_id"`
	Name        string `db:"name"`
	IsError     bool   `db:"is_error"`
	Hidden      bool   `db:"hidden"`
	HiddenKind  string `db:"hidden_kind"`
}

const messageSelect = `SELECT idx, role, content, content_null, tool_calls, tool_call_id, name, is_error, hidden, hidden_kind
	FROM messages`

func (r messageRow) message() (grounding.Message, error) {
	m := grounding.Message{
		Index: r.Idx, Role: r.Role, Content: r.Content, ContentNull: r.ContentNull,
		ToolCallID: r.ToolCallID, Name: r.Name, Error: r.IsError, HiddenKind: r.HiddenKind,
	}
	if r.Hidden {
		m.Visibility = grounding.Hidden
	}
	if len(r.ToolCalls) > 0 {
		if err := decodeJSON(r.ToolCalls, &m.ToolCalls); err != nil {
			return m, fmt.Errorf("message %d: decode tool calls: %w", r.Idx, err)
		}
	}
	return m, nil
}

// headSelect is messageSelect with each content read only as far as its
// first chars characters, and the length of the whole (content_bytes):
// what a page shows of a message, without copying a 60 MB tool answer to
// show 2,000 characters of it.
func headSelect(chars int) string {
	return `SELECT idx, role, substr(content, 1, ` + strconv.Itoa(max(chars, 1)) + `) AS content, octet_length(content) AS content_bytes,
	content_null, tool_calls, tool_call_id, name, is_error, hidden, hidden_kind
	FROM messages`
}

// headRow is a messageRow read by headSelect.
type headRow struct {
	ContentBytes int `db:"content_bytes"`
	messageRow
}

func (db *DB) messages(ctx context.Context, op, q string, args ...any) ([]grounding.Message, error) {
	var rows []messageRow
	if err := db.sel(ctx, &rows, q, args...); err != nil {
		return nil, storeErr(op, err)
	}
	msgs := make([]grounding.Message, len(rows))
	for i, r := range rows {
		m, err := r.message()
		if err != nil {
			return nil, fmt.Errorf("store: %s: %w", op, err)
		}
		msgs[i] = m
	}
	return msgs, nil
}

// heads runs a headSelect query: contents longer than what was read keep
// their whole length in Message.ContentBytes.
func (db *DB) heads(ctx context.Context, op, q string, args ...any) ([]grounding.Message, error) {
	var rows []headRow
	if err := db.sel(ctx, &rows, q, args...); err != nil {
		return nil, storeErr(op, err)
	}
	msgs := make([]grounding.Message, len(rows))
	for i, r := range rows {
		m, err := r.message()
		if err != nil {
			return nil, fmt.Errorf("store: %s: %w", op, err)
		}
		if r.ContentBytes > len(m.Content) {
			m.ContentBytes = r.ContentBytes
		}
		msgs[i] = m
	}
	return msgs, nil
}

// Messages returns the trajectory's messages with from <= index < to, in
// order, each with Index set. Visible messages have an empty Visibility.
func (db *DB) Messages(ctx context.Context, trajectoryID int64, from, to int) ([]grounding.Message, error) {
	return db.messages(ctx, fmt.Sprintf("messages %d..%d of trajectory %d", from, to, trajectoryID),
		messageSelect+` WHERE trajectory_id = ? AND idx >= ? AND idx < ? ORDER BY idx`, trajectoryID, from, to)
}

// MessagesHead is Messages with each content read only as far as its first
// chars characters; a longer one has its whole length in
// Message.ContentBytes. Pages read messages this way; checks and exports
// read them whole.
func (db *DB) MessagesHead(ctx context.Context, trajectoryID int64, from, to, chars int) ([]grounding.Message, error) {
	return db.heads(ctx, fmt.Sprintf("messages %d..%d of trajectory %d", from, to, trajectoryID),
		headSelect(chars)+` WHERE trajectory_id = ? AND idx >= ? AND idx < ? ORDER BY idx`, trajectoryID, from, to)
}

// VisibleBefore returns the last limit visible messages with index < before,
// in ascending order with Index set, and how many visible messages precede
// them ("… 24 earlier messages"). It is a page's read: contents are read as
// far as WindowContentChars (Message.ContentBytes holds a longer one's
// length).
func (db *DB) VisibleBefore(ctx context.Context, trajectoryID int64, before, limit int) (msgs []grounding.Message, earlier int, err error) {
	op := fmt.Sprintf("visible messages before %d of trajectory %d", before, trajectoryID)
	if limit > 0 {
		msgs, err = db.heads(ctx, op,
			headSelect(WindowContentChars)+` WHERE trajectory_id = ? AND hidden = ? AND idx < ? ORDER BY idx DESC LIMIT ?`,
			trajectoryID, false, before, limit)
		if err != nil {
			return nil, 0, err
		}
		slices.Reverse(msgs)
	}
	bound := before
	if len(msgs) > 0 {
		bound = msgs[0].Index
	}
	// Messages are written once, at import, so the two reads need no
	// transaction to agree.
	err = db.get(ctx, &earlier,
		`SELECT COUNT(*) FROM messages WHERE trajectory_id = ? AND hidden = ? AND idx < ?`, trajectoryID, false, bound)
	if err != nil {
		return nil, 0, storeErr(op, err)
	}
	return msgs, earlier, nil
}

// HiddenBefore returns every hidden message with index < before, in order,
// read as far as VisibleBefore reads them.
func (db *DB) HiddenBefore(ctx context.Context, trajectoryID int64, before int) ([]grounding.Message, error) {
	return db.heads(ctx, fmt.Sprintf("hidden messages before %d of trajectory %d", before, trajectoryID),
		headSelect(WindowContentChars)+` WHERE trajectory_id = ? AND hidden = ? AND idx < ? ORDER BY idx`, trajectoryID, true, before)
}

// windowSelect reads a MessageWindow in one statement: b finds Lo (the
// shown-th visible message before the first decision, 0 when there
// are fewer, or the reach asked for when that is earlier) and counts the
// visible messages before it once; the join then reads the range and the
// hidden messages before it by the primary key (trajectory_id, idx); it is
// an outer join so that Lo and the count arrive when no message is read.
func windowSelect(shown int) string {
	return `WITH b AS MATERIALIZED (
	SELECT w.lo, (SELECT COUNT(*) FROM messages c WHERE c.trajectory_id = ? AND c.hidden = ? AND c.idx < w.lo) AS earlier
	FROM (SELECT CASE WHEN ? >= 0 AND ? < v.lo THEN ? ELSE v.lo END AS lo
		FROM (SELECT COALESCE((SELECT idx FROM messages WHERE trajectory_id = ? AND hidden = ? AND idx < ?
			ORDER BY idx DESC LIMIT 1 OFFSET ` + strconv.Itoa(shown-1) + `), 0) AS lo) v) w)
SELECT b.lo AS window_lo, b.earlier AS window_earlier, COALESCE(m.idx, -1) AS idx, COALESCE(m.role, '') AS role,
	COALESCE(substr(m.content, 1, ` + strconv.Itoa(WindowContentChars) + `), '') AS content, COALESCE(octet_length(m.content), 0) AS content_bytes,
	COALESCE(m.content_null, ?) AS content_null, m.tool_calls,
	COALESCE(m.tool_call_id, '') AS tool_call_id, COALESCE(m.name, '') AS name, COALESCE(m.is_error, ?) AS is_error,
	COALESCE(m.hidden, ?) AS hidden, COALESCE(m.hidden_kind, '') AS hidden_kind
	FROM b LEFT JOIN messages m ON m.trajectory_id = ? AND m.idx <= ?
		AND ((m.idx >= b.lo AND ? - b.lo < ?) OR (m.hidden = ? AND m.idx < ?))
	ORDER BY m.idx`
}

type windowRow struct {
	Lo           int `db:"window_lo"`
	Earlier      int `db:"window_earlier"`
	ContentBytes int `db:"content_bytes"`
	messageRow
}

// WindowContentChars is how much of one message's content MessageWindow
// reads: pages show 2,000 characters and re-indent JSON up to 256 KiB, so
// a longer content is read only that far (Message.ContentBytes says how
// long it is). One 60 MB tool answer had SQLite sort and copy all of it on
// every view of its page: 1.5-2 s to show 2,000 characters.
const WindowContentChars = 256 << 10

// MessageWindow reads, in one statement, the messages a page of decisions
// shows: from the last shown (>= 1) visible messages before index first (or
// from reach, when reach >= 0 is earlier) up to index hi, and the hidden
// messages before index hiddenTo. The range is read only when it is
// narrower than span messages (hi - Lo < span); a wider one is left out
// (Range nil, Lo and Earlier set), for the caller to read what it needs of
// it, instead of hundreds of long observations it would not show. The
// page's five reads (the visible messages before, their count, the range,
// the hidden ones) were five round trips, a third of the review screen's.
func (db *DB) MessageWindow(ctx context.Context, trajectoryID int64, shown, first, reach, hi, hiddenTo, span int) (grounding.MessageWindow, error) {
	op := fmt.Sprintf("messages %d..%d of trajectory %d", first, hi, trajectoryID)
	var rows []windowRow
	if err := db.sel(ctx, &rows, windowSelect(max(shown, 1)),
		trajectoryID, false,
		reach, reach, reach,
		trajectoryID, false, first,
		false, false, false,
		trajectoryID, hi, hi, span, true, hiddenTo); err != nil {
		return grounding.MessageWindow{}, storeErr(op, err)
	}
	w := grounding.MessageWindow{Lo: first}
	if len(rows) > 0 {
		w.Lo, w.Earlier = rows[0].Lo, rows[0].Earlier
	}
	for _, r := range rows {
		if r.Idx < 0 {
			continue // the outer join's row when no message is read
		}
		m, err := r.message()
		if err != nil {
			return grounding.MessageWindow{}, fmt.Errorf("store: %s: %w", op, err)
		}
		if r.ContentBytes > len(m.Content) {
			m.ContentBytes = r.ContentBytes
		}
		if m.Index >= w.Lo && hi-w.Lo < span {
			w.Range = append(w.Range, m)
		}
		if r.Hidden && m.Index < hiddenTo {
			w.Hidden = append(w.Hidden, m)
		}
	}
	return w, nil
}

type decisionRow struct {
	Ordinal      int    `db:"ordinal"`
	Message      int    `db:"message_idx"`
	Call         int    `db:"call_idx"`
	Tool         string `db:"tool"`
	Observation  int    `db:"observation_idx"`
	Error        bool   `db:"is_error"`
	Action       string `db:"action"`
	E            int    `db:"e"`
	V            int    `db:"v"`
	G            int    `db:"g"`
	FlowOK       bool   `db:"flow_ok"`
	AutoVerdict  string `db:"auto_verdict"`
	HumanVerdict string `db:"human_verdict"`
	Verdict      string `db:"verdict"`
	Mask         int    `db:"mask"`
	Queued       bool   `db:"queued"`
	Reasons      []byte `db:"reasons"`
	Args         []byte `db:"args"`
	Detail       string `db:"detail"`
}

const decisionColumnsRead = `ordinal, message_idx, call_idx, tool, observation_idx, is_error,
	action, e, v, g, flow_ok, auto_verdict, human_verdict, verdict, mask, queued, reasons, args, detail`

func (r decisionRow) decision() (grounding.StoredDecision, error) {
	d := grounding.StoredDecision{
		Decision: grounding.Decision{Ordinal: r.Ordinal, Message: r.Message, Call: r.Call, Tool: r.Tool,
			Observation: r.Observation, Error: r.Error},
		Action: r.Action, E: r.E, V: r.V, G: r.G, FlowOK: r.FlowOK,
		AutoVerdict: grounding.Verdict(r.AutoVerdict), HumanVerdict: grounding.Verdict(r.HumanVerdict),
		Verdict: grounding.Verdict(r.Verdict), Mask: r.Mask, Queued: r.Queued, Detail: r.Detail,
	}
	if err := decodeJSON(r.Reasons, &d.Reasons); err != nil {
		return d, fmt.Errorf("decision %d: decode reasons: %w", r.Ordinal, err)
	}
	if err := decodeJSON(r.Args, &d.Args); err != nil {
		return d, fmt.Errorf("decision %d: decode evidence: %w", r.Ordinal, err)
	}
	return d, nil
}

// decisionAtQuery is headerQuery with the decision at an ordinal joined.
var decisionAtQuery = func() string {
	cols := strings.Split(decisionColumnsRead, ",")
	for i, c := range cols {
		cols[i] = "d." + strings.TrimSpace(c)
	}
	return `SELECT ` + headerColumns + `, ` + strings.Join(cols, ", ") + headerFrom +
		` JOIN decisions d ON d.trajectory_id = t.id AND d.ordinal = ? WHERE t.id = ?`
}()

// DecisionAt returns a trajectory's header and its decision at ordinal in
// one read, what the review screen shows of the claimed item (Trajectory
// and Decisions are two); grounding.ErrNotFound when either is missing.
func (db *DB) DecisionAt(ctx context.Context, trajectoryID int64, ordinal int) (grounding.TrajectoryHeader, grounding.StoredDecision, error) {
	op := fmt.Sprintf("decision %d of trajectory %d", ordinal, trajectoryID)
	var r struct {
		headerRow
		decisionRow
	}
	if err := db.get(ctx, &r, decisionAtQuery, ordinal, trajectoryID); err != nil {
		return grounding.TrajectoryHeader{}, grounding.StoredDecision{}, storeErr(op, err)
	}
	h, err := r.header()
	if err != nil {
		return grounding.TrajectoryHeader{}, grounding.StoredDecision{}, fmt.Errorf("store: %s: %w", op, err)
	}
	d, err := r.decision()
	if err != nil {
		return grounding.TrajectoryHeader{}, grounding.StoredDecision{}, fmt.Errorf("store: %s: %w", op, err)
	}
	return h, d, nil
}

// Decisions returns up to limit decisions of the trajectory with ordinal >=
// from, in order, with their stored checks; limit <= 0 returns all of them.
func (db *DB) Decisions(ctx context.Context, trajectoryID int64, from, limit int) ([]grounding.StoredDecision, error) {
	return db.DecisionsByVerdict(ctx, trajectoryID, "", from, limit)
}

// DecisionsByVerdict is Decisions keeping only the decisions whose
// effective verdict is verdict ("" keeps all): the trajectory page's
// "fail 2 · ambiguous 1" tabs. It reads the trajectory's decisions by
// their primary key; a trajectory has at most a few thousand.
func (db *DB) DecisionsByVerdict(ctx context.Context, trajectoryID int64, verdict grounding.Verdict, from, limit int) ([]grounding.StoredDecision, error) {
	op := fmt.Sprintf("decisions of trajectory %d", trajectoryID)
	q := `SELECT ` + decisionColumnsRead + ` FROM decisions
		WHERE trajectory_id = ? AND ordinal >= ?`
	args := []any{trajectoryID, from}
	if verdict != "" {
		op = fmt.Sprintf("%s decisions of trajectory %d", verdict, trajectoryID)
		q += ` AND verdict = ?`
		args = append(args, string(verdict))
	}
	q += ` ORDER BY ordinal`
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	var rows []decisionRow
	if err := db.sel(ctx, &rows, q, args...); err != nil {
		return nil, storeErr(op, err)
	}
	ds := make([]grounding.StoredDecision, len(rows))
	for i, r := range rows {
		d, err := r.decision()
		if err != nil {
			return nil, fmt.Errorf("store: %s: %w", op, err)
		}
		ds[i] = d
	}
	return ds, nil
}
