//! The scheduler (§4.2, §4.3): the loop that records each declared
//! schedule's firings. A schedule is declared, never created: the set is
//! the configuration's, read at boot. Each one's place is in the store —
//! when it was first seen and the last occurrence recorded — so a week down
//! fires once (the latest), a schedule declared this afternoon does not
//! announce this morning, and a firing still waiting on a busy channel takes
//! the newer occurrence rather than stacking (`Store::record_firing`). The
//! lanes post what is recorded when the channel is idle.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::{mpsc, watch};
use tracing::{info, warn};

use super::Recurrence;
use super::intake::{self, IntakeRefusal};
use crate::config::LoadedConfig;
use crate::lanes::LaneInput;
use crate::services::Services;
use crate::store::{NewTrigger, Store, StoreError, TriggerSource};

/// The longest the loop sleeps before looking again: a clock stepped
/// forward (a suspended host, an operator's correction) is noticed within
/// it.
const LOOK_AT_MOST_EVERY: Duration = Duration::from_secs(30);

/// One declared schedule.
#[derive(Debug, Clone)]
pub struct Declared {
    pub agent: String,
    pub name: String,
    pub recurrence: Recurrence,
    /// The channel's name, as declared.
    pub channel: String,
    /// The operator's words, posted when it fires.
    pub text: String,
}

/// Every schedule the configuration declares. `config check` refused any
/// whose recurrence or timezone does not parse, so none is dropped here.
pub fn declared(loaded: &LoadedConfig) -> Vec<Declared> {
    let operator = &loaded.config.deployment.operator_timezone;
    loaded
        .config
        .agents
        .iter()
        .flat_map(|agent| {
            agent.schedules.iter().filter_map(move |schedule| {
                let timezone = schedule.timezone.as_deref().unwrap_or(operator);
                let recurrence = Recurrence::parse(&schedule.recurrence, timezone).ok()?;
                Some(Declared {
                    agent: agent.username.clone(),
                    name: schedule.name.clone(),
                    recurrence,
                    channel: schedule.channel.clone(),
                    text: schedule.text.clone(),
                })
            })
        })
        .collect()
}

/// A schedule whose channel is no target for its agent, as boot names it.
#[derive(Debug, thiserror::Error)]
#[error("agents.{agent}.schedules `{name}`: {refusal}")]
pub struct UnreachableSchedule {
    pub agent: String,
    pub name: String,
    pub refusal: IntakeRefusal,
}

/// Each schedule's channel id, checked at boot: a direct message or a
/// channel without the agent refuses boot rather than record firings that
/// can never be posted (§4.2).
pub async fn targets(
    services: &Services,
    schedules: &[Declared],
) -> Result<BTreeMap<(String, String), String>, UnreachableSchedule> {
    let mut found = BTreeMap::new();
    for schedule in schedules {
        let key = (schedule.agent.clone(), schedule.channel.clone());
        if found.contains_key(&key) {
            continue;
        }
        let channel_id = intake::target(services, &schedule.agent, &schedule.channel)
            .await
            .map_err(|refusal| UnreachableSchedule {
                agent: schedule.agent.clone(),
                name: schedule.name.clone(),
                refusal,
            })?;
        found.insert(key, channel_id);
    }
    Ok(found)
}

/// Records `schedule`'s firing if one is due at `now`; returns the row that
/// will announce it. The first sight of a schedule marks it declared then.
pub fn fire_if_due(
    store: &mut Store,
    schedule: &Declared,
    channel_id: &str,
    now: DateTime<Utc>,
) -> Result<Option<i64>, StoreError> {
    let now_ms = now.timestamp_millis();
    let mark = store.schedule_mark(&schedule.agent, &schedule.name, now_ms)?;
    let since = mark
        .last_occurrence
        .unwrap_or(i64::MIN)
        .max(mark.declared_at);
    let since = DateTime::from_timestamp_millis(since).unwrap_or(now);
    let Some(occurrence) = schedule.recurrence.due(since, now) else {
        return Ok(None);
    };
    let firing = NewTrigger {
        source: TriggerSource::Schedule,
        agent: schedule.agent.clone(),
        channel_id: channel_id.to_string(),
        sender: "the operator's schedule".into(),
        subject: schedule.name.clone(),
        reference: schedule.name.clone(),
        body: Some(schedule.text.clone()),
        detail: serde_json::json!({
            "schedule": schedule.name,
            "occurrence": occurrence.to_rfc3339(),
        }),
    };
    store
        .record_firing(
            &firing,
            &schedule.name,
            occurrence.timestamp_millis(),
            now_ms,
        )
        .map(Some)
}

/// Runs until `stop`: records each firing as it comes due and tells the
/// lanes, which post it when its channel is idle.
pub fn spawn(
    services: Arc<Services>,
    schedules: Vec<Declared>,
    targets: BTreeMap<(String, String), String>,
    lanes: mpsc::Sender<LaneInput>,
    mut stop: watch::Receiver<bool>,
) {
    if schedules.is_empty() {
        return;
    }
    info!(schedules = schedules.len(), "scheduler running");
    tokio::spawn(async move {
        loop {
            let now = Utc::now();
            for schedule in &schedules {
                let key = (schedule.agent.clone(), schedule.channel.clone());
                let Some(channel_id) = targets.get(&key).cloned() else {
                    continue;
                };
                let (declared, channel) = (schedule.clone(), channel_id.clone());
                match services
                    .store
                    .call(move |s| fire_if_due(s, &declared, &channel, now))
                    .await
                {
                    Ok(Some(id)) => {
                        info!(trigger = id, agent = %schedule.agent, schedule = %schedule.name, "schedule fired");
                        let _ = lanes.send(LaneInput::TriggerRecorded(channel_id)).await;
                    }
                    Ok(None) => {}
                    Err(error) => {
                        warn!(%error, schedule = %schedule.name, "could not record a schedule's firing")
                    }
                }
            }
            let wait = until_next(&schedules, Utc::now());
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = stop.changed() => return,
            }
        }
    });
}

/// How long until the earliest next occurrence, at most
/// [`LOOK_AT_MOST_EVERY`].
fn until_next(schedules: &[Declared], now: DateTime<Utc>) -> Duration {
    schedules
        .iter()
        .filter_map(|s| s.recurrence.next_after(now))
        .min()
        .and_then(|next| (next - now).to_std().ok())
        .map_or(LOOK_AT_MOST_EVERY, |wait| {
            wait.min(LOOK_AT_MOST_EVERY) + Duration::from_millis(5)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, 0)
            .single()
            .expect("a time")
    }

    fn daily(expression: &str, timezone: &str) -> Declared {
        Declared {
            agent: "mira".into(),
            name: "report".into(),
            recurrence: Recurrence::parse(expression, timezone).expect("parses"),
            channel: "ops".into(),
            text: "Post the report.".into(),
        }
    }

    fn open() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("s.db")).expect("open");
        (dir, store)
    }

    fn occurrence(store: &Store, id: i64) -> String {
        let row = store.trigger(id).expect("read").expect("row");
        row.detail["occurrence"].as_str().expect("text").to_string()
    }

    #[test]
    fn s4_2_a_schedule_declared_this_afternoon_does_not_announce_this_morning() {
        let (_dir, mut store) = open();
        let schedule = daily("0 9 * * *", "UTC");
        let first_seen = at(2026, 12, 1, 14, 0);
        assert_eq!(
            fire_if_due(&mut store, &schedule, "c1", first_seen).expect("fire"),
            None
        );
        assert_eq!(
            fire_if_due(&mut store, &schedule, "c1", at(2026, 12, 1, 23, 0)).expect("fire"),
            None
        );
        let next = fire_if_due(&mut store, &schedule, "c1", at(2026, 12, 2, 9, 0))
            .expect("fire")
            .expect("due");
        assert_eq!(occurrence(&store, next), "2026-12-02T09:00:00+00:00");
    }

    #[test]
    fn s4_2_a_week_down_fires_once_with_the_latest_occurrence() {
        let (_dir, mut store) = open();
        let schedule = daily("0 9 * * *", "UTC");
        fire_if_due(&mut store, &schedule, "c1", at(2026, 12, 1, 8, 0)).expect("fire");
        let id = fire_if_due(&mut store, &schedule, "c1", at(2026, 12, 8, 10, 0))
            .expect("fire")
            .expect("due");
        assert_eq!(occurrence(&store, id), "2026-12-08T09:00:00+00:00");
        assert_eq!(
            fire_if_due(&mut store, &schedule, "c1", at(2026, 12, 8, 10, 1)).expect("fire"),
            None,
            "once"
        );
        assert!(store.next_pending("c1").expect("read").is_some());
        store.mark_announced(id, "p1", 0).expect("announce");
        assert!(
            store.next_pending("c1").expect("read").is_none(),
            "one row in all"
        );
    }

    #[test]
    fn s4_2_a_busy_channel_delays_a_firing_and_never_stacks_it() {
        let (_dir, mut store) = open();
        let schedule = daily("0 * * * *", "UTC");
        fire_if_due(&mut store, &schedule, "c1", at(2026, 12, 1, 8, 30)).expect("fire");
        let first = fire_if_due(&mut store, &schedule, "c1", at(2026, 12, 1, 9, 0))
            .expect("fire")
            .expect("due");
        let second = fire_if_due(&mut store, &schedule, "c1", at(2026, 12, 1, 10, 0))
            .expect("fire")
            .expect("due");
        assert_eq!(
            first, second,
            "still waiting: the newer occurrence, one row"
        );
        assert_eq!(occurrence(&store, first), "2026-12-01T10:00:00+00:00");
    }

    #[test]
    fn s4_2_daylight_saving_neither_skips_nor_doubles() {
        let (_dir, mut store) = open();
        // 01:30 in Berlin falls in neither gap nor fold; 02:30 is lost on 29
        // March 2026 and 02:30 repeats on 25 October 2026.
        let schedule = daily("30 2 * * *", "Europe/Berlin");
        let mut fired = Vec::new();
        let mut now = at(2026, 3, 27, 0, 0);
        fire_if_due(&mut store, &schedule, "c1", now).expect("fire");
        while now < at(2026, 3, 31, 0, 0) {
            now += chrono::TimeDelta::minutes(10);
            if let Some(id) = fire_if_due(&mut store, &schedule, "c1", now).expect("fire") {
                store
                    .mark_announced(id, &format!("p{id}-{now}"), 0)
                    .expect("announce");
                fired.push(occurrence(&store, id));
            }
        }
        assert_eq!(
            fired.len(),
            4,
            "27, 28, 29 (moved past the gap), 30 March: {fired:?}"
        );
        let mut autumn = Vec::new();
        let mut now = at(2026, 10, 24, 0, 0);
        // Down since the spring: the missed occurrences fire once.
        let missed = fire_if_due(&mut store, &schedule, "c1", now)
            .expect("fire")
            .expect("the latest missed");
        assert_eq!(occurrence(&store, missed), "2026-10-23T00:30:00+00:00");
        store.mark_announced(missed, "missed", 0).expect("announce");
        while now < at(2026, 10, 27, 0, 0) {
            now += chrono::TimeDelta::minutes(10);
            if let Some(id) = fire_if_due(&mut store, &schedule, "c1", now).expect("fire") {
                store
                    .mark_announced(id, &format!("q{id}-{now}"), 0)
                    .expect("announce");
                autumn.push(occurrence(&store, id));
            }
        }
        assert_eq!(
            autumn.len(),
            3,
            "24, 25 (once in the fold), 26 October: {autumn:?}"
        );
    }

    #[test]
    fn s4_2_the_loop_sleeps_until_the_next_occurrence_at_most_a_while() {
        let schedule = daily("0 9 * * *", "UTC");
        let wait = until_next(std::slice::from_ref(&schedule), at(2026, 12, 1, 8, 59));
        assert!(
            wait <= LOOK_AT_MOST_EVERY + Duration::from_millis(5),
            "{wait:?}"
        );
        let soon = until_next(
            std::slice::from_ref(&schedule),
            at(2026, 12, 1, 8, 59) + chrono::TimeDelta::seconds(50),
        );
        assert!(soon <= Duration::from_secs(11), "{soon:?}");
    }
}
