-- /collegium usage (§8.4) reads the turns that ended in the last 24 hours
-- and, apart, the completions a time limit, a steer or a fold cut short.
-- The first index covers the read whole (when a turn ended, whose, on what
-- model, what it spent), so 100,000 turns are summed without touching a
-- row; the second holds only the cut rows, so they are found without
-- walking the ordinary completions (docs/benchmarks.md).
CREATE INDEX turns_usage ON turns (
    ended_at, agent, model, prompt_tokens, cached_prompt_tokens,
    completion_tokens, reasoning_tokens, cost_micro_usd
) WHERE ended_at IS NOT NULL;
CREATE INDEX turn_events_cut ON turn_events (turn_id)
    WHERE (kind = 'completion' AND json_extract(detail, '$.finish') = 'TimeLimit'
           OR kind IN ('steer', 'fold')
              AND json_extract(detail, '$.aborted_completion') IS NOT NULL);
