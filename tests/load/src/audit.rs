//! After the traffic: waiting for every lane to settle, then reading the
//! store the daemon kept to check what the load test promises — every post
//! recorded, every addressed post answered once or refused by §4.5,
//! nothing queued, running or undecided, no reply twice — and to measure
//! post-to-turn-start and post-to-reply latency.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};

use crate::deployment::Deployment;
use crate::profile::Profile;
use crate::report::{Report, percentiles};
use crate::traffic::{Addressed, Driven, Sent};

/// The text of §4.5's correction, which the audit counts.
const CORRECTION: &str = "so none of them will act on it";

/// The store, opened read-only beside the running daemon (it is in WAL
/// mode, so reading takes no lock the daemon waits on).
fn store(deployment: &Deployment) -> Connection {
    Connection::open_with_flags(
        deployment.h.state_dir().join("collegium.db"),
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .expect("open the store read-only")
}

fn count(db: &Connection, sql: &str) -> i64 {
    db.query_row(sql, [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Every (agent, turn) that answered each post, read in one pass:
/// `turn_answers` is keyed by turn, so a lookup per post would scan it.
struct Answers(HashMap<String, Vec<(String, String)>>);

impl Answers {
    fn read(db: &Connection) -> Self {
        let mut by_post: HashMap<String, Vec<(String, String)>> = HashMap::new();
        let mut rows = db
            .prepare("SELECT a.post_id, t.agent, t.id FROM turn_answers a JOIN turns t ON t.id = a.turn_id")
            .expect("answers");
        let found = rows
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get(1)?, r.get(2)?)))
            .expect("answers");
        for row in found {
            let (post, agent, turn) = row.expect("answer");
            by_post.entry(post).or_default().push((agent, turn));
        }
        Self(by_post)
    }

    /// How many times `agent` (anyone, for none) answered the post.
    fn count(&self, post: &str, agent: Option<&str>) -> usize {
        self.0.get(post).map_or(0, |answers| {
            answers
                .iter()
                .filter(|(a, _)| agent.is_none_or(|agent| a == agent))
                .count()
        })
    }

    /// The turn that answered the post for `agent`.
    fn turn(&self, post: &str, agent: &str) -> Option<&str> {
        self.0
            .get(post)?
            .iter()
            .find(|(a, _)| a == agent)
            .map(|(_, turn)| turn.as_str())
    }
}

fn unanswered(answers: &Answers, deployment: &Deployment, sent: &[Sent]) -> usize {
    sent.iter()
        .filter_map(|s| s.addressed.answerer().map(|a| (s, a)))
        .filter(|(s, a)| answers.count(&s.id, Some(&deployment.agents[*a])) == 0)
        .count()
}

/// Whether the settle wait saw everything answered before its limit, and
/// how long the lanes took to settle after the traffic stopped.
#[derive(Debug, Clone, Copy)]
pub struct Settled {
    pub in_time: bool,
    pub after: Duration,
}

/// Waits until no queue row or running turn is left and every addressed
/// post has its answer, or the profile's limit passes.
pub async fn settle(deployment: &Deployment, driven: &Driven, profile: &Profile) -> Settled {
    let db = store(deployment);
    let started = Instant::now();
    loop {
        let quiet = count(&db, "SELECT count(*) FROM queue") == 0
            && count(&db, "SELECT count(*) FROM turns WHERE ended_at IS NULL") == 0
            && unanswered(&Answers::read(&db), deployment, &driven.sent) == 0;
        if quiet || started.elapsed() > profile.settle_limit {
            // The replies of the last turns reach the store through the
            // feed, a moment after their turns end.
            tokio::time::sleep(Duration::from_secs(3)).await;
            return Settled {
                in_time: quiet,
                after: started.elapsed(),
            };
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// A turn as the audit reads it.
struct Turn {
    started_at: i64,
    exit_kind: Option<String>,
    replies: Vec<i64>,
}

fn turns(db: &Connection) -> HashMap<String, Turn> {
    let mut turns = HashMap::new();
    let mut rows = db
        .prepare("SELECT id, started_at, exit_kind FROM turns")
        .expect("turns");
    let found = rows
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get(1)?, r.get(2)?)))
        .expect("turns");
    for row in found {
        let (id, started_at, exit_kind) = row.expect("turn");
        turns.insert(
            id,
            Turn {
                started_at,
                exit_kind,
                replies: Vec::new(),
            },
        );
    }
    let mut rows = db
        .prepare(
            "SELECT turn_id, created_at FROM posts WHERE role = 'reply' AND turn_id IS NOT NULL",
        )
        .expect("replies");
    let found = rows
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
        .expect("replies");
    for row in found {
        let (turn, at) = row.expect("reply");
        if let Some(t) = turns.get_mut(&turn) {
            t.replies.push(at);
        }
    }
    turns
}

pub fn audit(
    deployment: &mut Deployment,
    driven: &Driven,
    settled: Settled,
    profile: &Profile,
) -> Report {
    let db = store(deployment);
    let mut violations = Vec::new();
    if !settled.in_time {
        violations.push(format!(
            "the lanes had not settled {} s after the traffic stopped",
            settled.after.as_secs()
        ));
    }
    let recorded: i64 = count(&db, "SELECT count(*) FROM posts");
    let mut missing = 0;
    for sent in &driven.sent {
        let found: i64 = db
            .query_row(
                "SELECT count(*) FROM posts WHERE id = ?1",
                [&sent.id],
                |r| r.get(0),
            )
            .expect("post");
        if found == 0 {
            missing += 1;
        }
    }
    if missing > 0 {
        violations.push(format!(
            "{missing} posts the people made are not in the store"
        ));
    }
    let all_turns = turns(&db);
    let answers = Answers::read(&db);
    let (mut to_turn, mut to_reply) = (Vec::new(), Vec::new());
    let mut refused: usize = 0;
    for sent in &driven.sent {
        match &sent.addressed {
            Addressed::Two(..) => {
                refused += 1;
                let n = answers.count(&sent.id, None);
                if n > 0 {
                    violations.push(format!(
                        "post {} addressed two agents and started {n} turns (§4.5)",
                        sent.id
                    ));
                }
            }
            Addressed::Nobody => {}
            Addressed::One(a) | Addressed::Direct(a) => {
                let agent = &deployment.agents[*a];
                let mine = answers.count(&sent.id, Some(agent));
                let anyone = answers.count(&sent.id, None);
                if mine != 1 || anyone != 1 {
                    violations.push(format!(
                        "post {} addressed to {agent} was answered {mine} times by it and {anyone} times in all",
                        sent.id
                    ));
                    continue;
                }
                let Some(turn) = answers
                    .turn(&sent.id, agent)
                    .and_then(|id| all_turns.get(id))
                else {
                    continue;
                };
                to_turn.push(turn.started_at - sent.created_at);
                if let Some(first) = turn.replies.iter().min() {
                    to_reply.push(first - sent.created_at);
                }
            }
        }
    }
    let corrections = count(
        &db,
        &format!(
            "SELECT count(*) FROM posts WHERE author_kind = 'system_bot' AND message LIKE '%{CORRECTION}%'"
        ),
    );
    if corrections != refused as i64 {
        violations.push(format!(
            "{refused} posts addressed two agents and the system bot corrected {corrections} (§4.5)"
        ));
    }
    for (sql, what) in [
        ("SELECT count(*) FROM queue", "queue rows remain"),
        (
            "SELECT count(*) FROM turns WHERE ended_at IS NULL",
            "turns are still running or parked",
        ),
        (
            "SELECT count(*) FROM decisions WHERE outcome IS NULL",
            "decisions wait on a person",
        ),
        (
            "SELECT count(*) FROM posts WHERE author_kind = 'agent' AND role = 'post'",
            "agent posts are not a turn's own (a reply posted twice reads so)",
        ),
    ] {
        let n = count(&db, sql);
        if n > 0 {
            violations.push(format!("{n} {what}"));
        }
    }
    let mut exits: HashMap<String, usize> = HashMap::new();
    for (id, turn) in &all_turns {
        *exits
            .entry(turn.exit_kind.clone().unwrap_or_else(|| "running".into()))
            .or_default() += 1;
        match turn.replies.len() {
            1 => {}
            0 => violations.push(format!(
                "turn {id} ended ({}) without a reply",
                turn.exit_kind.as_deref().unwrap_or("running")
            )),
            n => violations.push(format!("turn {id} replied {n} times")),
        }
    }
    let logged = deployment.daemon.logged();
    let level = |l: &str| {
        logged
            .iter()
            .filter(|line| line["level"].as_str() == Some(l))
            .count()
    };
    let errors = level("ERROR");
    if errors > 0 {
        violations.push(format!("the daemon logged {errors} errors"));
    }
    Report {
        profile: profile.clone(),
        posted: driven.sent.len(),
        posting_took: driven.elapsed,
        settled_after: settled.after,
        recorded_posts: recorded,
        turns: all_turns.len(),
        exits,
        refused,
        to_turn_start: percentiles(&mut to_turn),
        to_reply: percentiles(&mut to_reply),
        resident: driven.resident.clone(),
        warnings: level("WARN"),
        violations,
    }
}
