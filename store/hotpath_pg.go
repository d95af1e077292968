package store

// Postgres forms of the adjudication hot path. Each folds a sequence of the
// portable statements into one statement with data-modifying CTEs, so a
// verdict and the next claim take 10 round trips instead of 16: on this
// project's 2-core machine the round trips, not the work, were the cost
// (BENCHMARKS.md, "Adjudication"). SQLite runs the portable statements one by
// one; its writer is alone and each statement is a function call.
//
// A CTE sees the snapshot of the statement, so none of these reads rows
// that a lock wait in the same statement could have made stale: the item
// lock is always taken by an earlier statement.

// pgRecordVerdict appends the verdict event and marks the claim judged.
// Arguments: the 11 event columns, then verdict, expires_at, item, user.
const pgRecordVerdict = `WITH e AS (INSERT INTO verdict_events
		(item_id, run_id, trajectory_id, ordinal, user_id, kind, verdict, prev_verdict, note, undoes, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id),
	c AS (UPDATE claims SET verdict = ?, expires_at = ? WHERE item_id = ? AND user_id = ?)
	SELECT id FROM e`

// pgSettleRead moves the item's state (when it changes) and reads and locks
// the decision. Arguments: state, item, state, trajectory, ordinal.
const pgSettleRead = `WITH s AS (UPDATE queue_items SET state = ? WHERE id = ? AND state <> ?)
	SELECT auto_verdict, human_verdict, verdict, mask, g, flow_ok, queued, reasons, decided_by
	FROM decisions WHERE trajectory_id = ? AND ordinal = ? FOR UPDATE`

// pgSettleWrite writes the decision's human verdict, effective verdict and
// mask, moves the trajectory's counters, and moves the run's without ever
// waiting for its row (migration 00009): when the row is free it takes it
// and folds the pending deltas with this change into it, else it appends
// this change as a delta. Arguments:
// human, verdict, mask, decided_by, decided_at, trajectory, ordinal; pass,
// fail, ambiguous, queued, supervised, supervised, trajectory; supervised;
// run; run, pass, fail, ambiguous, queued, supervised; run; pass, fail,
// ambiguous, queued, supervised.
const pgSettleWrite = `WITH dec AS (UPDATE decisions SET human_verdict = ?, verdict = ?, mask = ?, decided_by = ?, decided_at = ?
		WHERE trajectory_id = ? AND ordinal = ?),
	t AS (UPDATE trajectories SET n_pass = n_pass + ?, n_fail = n_fail + ?, n_ambiguous = n_ambiguous + ?,
		n_queued = n_queued + ?, n_supervised = n_supervised + ?,
		certified = (success AND workflow_ok AND n_supervised + ? > 0)
		WHERE id = ? RETURNING success AND workflow_ok AS ok, n_supervised),
	cert AS (SELECT (CASE WHEN ok AND n_supervised > 0 THEN 1 ELSE 0 END)
		- (CASE WHEN ok AND n_supervised - ? > 0 THEN 1 ELSE 0 END) AS d FROM t),
	l AS (SELECT id FROM runs WHERE id = ? FOR NO KEY UPDATE SKIP LOCKED),
	ins AS (INSERT INTO run_count_deltas (run_id, n_pass, n_fail, n_ambiguous, n_queued, n_supervised, n_certified)
		SELECT ?, ?, ?, ?, ?, ?, cert.d FROM cert WHERE NOT EXISTS (SELECT 1 FROM l)),
	gone AS (DELETE FROM run_count_deltas WHERE run_id = ? AND EXISTS (SELECT 1 FROM l)
		RETURNING n_pass, n_fail, n_ambiguous, n_queued, n_supervised, n_certified),
	s AS (SELECT COALESCE(SUM(n_pass), 0) AS p, COALESCE(SUM(n_fail), 0) AS f, COALESCE(SUM(n_ambiguous), 0) AS a,
		COALESCE(SUM(n_queued), 0) AS q, COALESCE(SUM(n_supervised), 0) AS s, COALESCE(SUM(n_certified), 0) AS c FROM gone)
	UPDATE runs SET n_pass = n_pass + ? + s.p, n_fail = n_fail + ? + s.f, n_ambiguous = n_ambiguous + ? + s.a,
		n_queued = n_queued + ? + s.q, n_supervised = n_supervised + ? + s.s, n_certified = n_certified + cert.d + s.c
	FROM s, l, cert WHERE runs.id = l.id`

// pgClaimItem inserts the claim if a slot is still free (the count is a new
// snapshot, taken after the candidate row was locked) and returns the item
// as itemSelect does, or no row. The new claim is not in the item's holder
// count (same snapshot): the caller adds it. Arguments: item, user,
// claimed_at, expires_at, skipped, item, skipped, now, required; then
// itemSelect's two.
const pgClaimItem = `WITH ins AS (INSERT INTO claims (item_id, user_id, claimed_at, expires_at, verdict, skipped)
		SELECT ?, ?, ?, ?, '', ?
		WHERE (SELECT COUNT(*) FROM claims c WHERE c.item_id = ? AND (c.verdict <> '' OR (c.skipped = ? AND c.expires_at > ?))) < ?
		ON CONFLICT (item_id, user_id) DO UPDATE SET claimed_at = excluded.claimed_at, expires_at = excluded.expires_at
		RETURNING item_id)
	` + itemSelect + ` WHERE q.id IN (SELECT item_id FROM ins)`
