use serde_json::json;

use super::*;
use crate::inference::Usage;
use crate::store::{NewTurn, TraceKind, TurnCause, TurnEnd, TurnEvent};

/// Agent, model, prompt, cached, completion, reasoning and cost sums.
type Sums = (String, String, i64, i64, i64, i64, Option<i64>);

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("s.db")).expect("open");
    (dir, store)
}

fn turn(store: &Store, id: &str, agent: &str, model: &str, ended_at: Option<Millis>) {
    store
        .open_turn(&NewTurn {
            id: id.into(),
            agent: agent.into(),
            channel_id: format!("channel-of-{id}"),
            boot_id: "boot".into(),
            started_at: 1_000,
            cause: TurnCause::Post,
            answers_post_id: None,
            depth: 0,
            chain_root: id.into(),
            chain_length: 1,
            model: model.into(),
        })
        .expect("turn");
    if let Some(at) = ended_at {
        store
            .end_turn(
                id,
                &TurnEnd {
                    exit_kind: "abandoned".into(),
                    ended_at: at,
                    ended_by: None,
                    context_reach_post_id: None,
                },
            )
            .expect("end");
    }
}

fn used(prompt: u64, cached: u64, completion: u64, reasoning: u64, cost: Option<i64>) -> Usage {
    Usage {
        prompt_tokens: prompt,
        cached_prompt_tokens: cached,
        cache_write_tokens: 0,
        completion_tokens: completion,
        reasoning_tokens: reasoning,
        cost_micro_usd: cost,
    }
}

fn event(store: &Store, turn: &str, kind: TraceKind, detail: serde_json::Value) {
    store
        .append_event(&TurnEvent {
            turn_id: turn.into(),
            seq: 0,
            at: 2_000,
            kind,
            call_id: None,
            tool: None,
            arguments: None,
            content: None,
            detail: Some(detail.to_string()),
        })
        .expect("event");
}

#[test]
fn s8_4_usage_sums_equal_the_stores_and_cut_completions_stay_outside_the_totals() {
    let (_dir, mut store) = open();
    let since = 10_000;
    // mira on two models, bo on one; a turn ended before the window, and
    // one still running, count nowhere.
    turn(&store, "t1", "mira", "big", Some(since + 1));
    turn(&store, "t2", "mira", "big", Some(since + 5));
    turn(&store, "t3", "mira", "small", Some(since));
    turn(&store, "t4", "bo", "big", Some(since + 9));
    turn(&store, "old", "mira", "big", Some(since - 1));
    turn(&store, "running", "mira", "big", None);
    store
        .add_usage("t1", &used(1_000, 800, 50, 10, Some(7)))
        .expect("usage");
    store
        .add_usage("t1", &used(1_100, 1_000, 60, 0, Some(3)))
        .expect("usage");
    store
        .add_usage("t2", &used(500, 0, 20, 5, None))
        .expect("usage");
    store
        .add_usage("t3", &used(300, 100, 30, 0, None))
        .expect("usage");
    store
        .add_usage("t4", &used(900, 900, 90, 90, Some(11)))
        .expect("usage");
    store
        .add_usage("old", &used(99_999, 0, 9, 0, Some(1)))
        .expect("usage");
    store
        .add_usage("running", &used(77_777, 0, 7, 0, None))
        .expect("usage");
    // Cut completions: their estimates are recorded on events and added to
    // no total (§7.2, §7.5, §4.4).
    event(
        &store,
        "t1",
        TraceKind::Completion,
        json!({"finish": "TimeLimit", "usage": {"prompt_tokens": 400, "completion_tokens": 25, "estimated": true}}),
    );
    event(
        &store,
        "t1",
        TraceKind::Completion,
        json!({"finish": "Stop", "usage": {"prompt_tokens": 1_100, "completion_tokens": 60}}),
    );
    event(
        &store,
        "t2",
        TraceKind::Steer,
        json!({"by": "ana", "aborted_completion": {"estimated": true, "prompt_tokens": 200, "completion_tokens": 8, "reasoning_tokens": 0}}),
    );
    event(&store, "t2", TraceKind::Steer, json!({"by": "ana"}));
    // Appended inside a caller's transaction, as a bulk load does: counted
    // all the same.
    store.bulk(|s| event(
        s,
        "t4",
        TraceKind::Fold,
        json!({"aborted_completion": {"estimated": true, "prompt_tokens": 50, "completion_tokens": 1, "reasoning_tokens": 0}}),
    ));
    event(
        &store,
        "old",
        TraceKind::Steer,
        json!({"aborted_completion": {"prompt_tokens": 5, "completion_tokens": 5}}),
    );

    let report = store.usage_since(since).expect("usage");
    // The store's own sums, by a plain query over the same turns.
    let expected: Vec<Sums> = store
        .conn
        .prepare(
            "SELECT agent, model, SUM(prompt_tokens), SUM(cached_prompt_tokens),
                    SUM(completion_tokens), SUM(reasoning_tokens), SUM(cost_micro_usd)
             FROM turns WHERE ended_at >= ?1 GROUP BY agent, model ORDER BY agent, model",
        )
        .expect("prepare")
        .query_map([since], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
            ))
        })
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let got: Vec<_> = report
        .rows
        .iter()
        .map(|r| {
            (
                r.agent.clone(),
                r.model.clone(),
                r.prompt_tokens as i64,
                r.cached_prompt_tokens as i64,
                r.completion_tokens as i64,
                r.reasoning_tokens as i64,
                r.cost_micro_usd,
            )
        })
        .collect();
    assert_eq!(got, expected);
    assert_eq!(
        report.rows[1],
        UsageRow {
            agent: "mira".into(),
            model: "big".into(),
            turns: 2,
            prompt_tokens: 2_600,
            cached_prompt_tokens: 1_800,
            completion_tokens: 130,
            reasoning_tokens: 15,
            cost_micro_usd: Some(10),
            turns_with_cost: 1,
        }
    );
    assert_eq!(report.rows[2].cost_micro_usd, None, "none reported");
    assert_eq!(
        report.cut,
        vec![
            CutRow {
                agent: "bo".into(),
                model: "big".into(),
                by: CutBy::Fold,
                completions: 1,
                estimated_tokens: 51,
            },
            CutRow {
                agent: "mira".into(),
                model: "big".into(),
                by: CutBy::TimeLimit,
                completions: 1,
                estimated_tokens: 425,
            },
            CutRow {
                agent: "mira".into(),
                model: "big".into(),
                by: CutBy::Steer,
                completions: 1,
                estimated_tokens: 208,
            },
        ]
    );
    // A clear deletes the trace events of every turn in its channel and
    // keeps the turn records: usage reads exactly as before (§8.5).
    for id in ["t1", "t2", "t3", "t4", "old", "running"] {
        store
            .clear_channel(&format!("channel-of-{id}"), Millis::MAX, false)
            .expect("clear");
    }
    let events: i64 = store
        .conn
        .query_row("SELECT COUNT(*) FROM turn_events", [], |r| r.get(0))
        .expect("count");
    assert_eq!(events, 0, "the clear deleted the trace events");
    assert_eq!(store.usage_since(since).expect("usage"), report);
}
