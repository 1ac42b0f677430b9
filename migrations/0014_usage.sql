-- /collegium usage (§8.4) reads the turns that ended in the last 24 hours
-- and, apart, the completions a time limit, a steer or a fold cut short.
-- The index covers the read whole (when a turn ended, whose, on what model,
-- what it spent), so 100,000 turns are summed without touching a row
-- (docs/benchmarks.md).
CREATE INDEX turns_usage ON turns (
    ended_at, agent, model, prompt_tokens, cached_prompt_tokens,
    completion_tokens, reasoning_tokens, cost_micro_usd
) WHERE ended_at IS NOT NULL;

-- The cut completions, counted per turn as their events are appended.
-- Accounting, not content: a clear deletes a turn's trace events and keeps
-- its turn record, and this with it, so usage reads exactly as before
-- (§8.5). `estimated_tokens` are estimates no total includes.
CREATE TABLE turn_cuts (
    turn_id          TEXT NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    cut_by           TEXT NOT NULL CHECK (cut_by IN ('time_limit', 'steer', 'fold')),
    completions      INTEGER NOT NULL,
    estimated_tokens INTEGER NOT NULL,
    PRIMARY KEY (turn_id, cut_by)
) WITHOUT ROWID;

INSERT INTO turn_cuts (turn_id, cut_by, completions, estimated_tokens)
SELECT turn_id,
       CASE kind WHEN 'completion' THEN 'time_limit' ELSE kind END,
       COUNT(*),
       SUM(COALESCE(
           CASE WHEN kind = 'completion'
                THEN json_extract(detail, '$.usage.prompt_tokens')
                     + json_extract(detail, '$.usage.completion_tokens')
                ELSE json_extract(detail, '$.aborted_completion.prompt_tokens')
                     + json_extract(detail, '$.aborted_completion.completion_tokens')
           END, 0))
FROM turn_events
WHERE kind = 'completion' AND json_extract(detail, '$.finish') = 'TimeLimit'
   OR kind IN ('steer', 'fold') AND json_extract(detail, '$.aborted_completion') IS NOT NULL
GROUP BY turn_id, CASE kind WHEN 'completion' THEN 'time_limit' ELSE kind END;
