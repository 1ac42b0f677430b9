//! `usage` (§8.4): token usage per agent and model over the turns that
//! ended in the last 24 hours, in any channel, abandoned ones included —
//! prompt tokens with the share a cache served, completion tokens with the
//! reasoning among them, and the cost where the provider reported one (§3.8)
//! — then how many completions a time limit, a steer or a fold cut short
//! and about how many tokens they spent, which no total above includes,
//! since the provider reported nothing for them (§7.2, §7.5, §4.4).

use std::fmt::Write as _;

use axum::Json;
use serde_json::Value;

use super::{CommandRequest, ephemeral};
use crate::context::window::local_time;
use crate::services::Services;
use crate::store::{CutBy, CutRow, Millis, UsageReport, UsageRow};

/// The window `usage` reports over (§8.4).
pub const WINDOW_MS: Millis = 24 * 60 * 60 * 1000;

/// The answer to `/collegium usage`.
pub async fn usage(services: &Services, _request: &CommandRequest, words: &[&str]) -> Json<Value> {
    if !words.is_empty() {
        return ephemeral("`/collegium usage` takes no arguments.");
    }
    let since = chrono::Utc::now().timestamp_millis() - WINDOW_MS;
    match services.store.call(move |s| s.usage_since(since)).await {
        Ok(report) => ephemeral(&render(
            &report,
            &services.display_names,
            &format!(
                "{} ({})",
                local_time(since, services.timezone),
                services.timezone_name
            ),
        )),
        Err(error) => ephemeral(&format!("Usage could not be read from the store: {error}")),
    }
}

/// The report, as the invoker reads it.
pub fn render(
    report: &UsageReport,
    names: &std::collections::BTreeMap<String, String>,
    since: &str,
) -> String {
    let name = |agent: &str| crate::services::display_name(names, agent).to_string();
    let mut out = format!(
        "Usage over turns that ended since {since}, in every channel, abandoned turns included:\n"
    );
    if report.rows.is_empty() {
        out.push_str("- no turn ended in that time.\n");
    }
    for row in &report.rows {
        let _ = writeln!(out, "- {}", line(&name(&row.agent), row));
    }
    if report.cut.is_empty() {
        out.push_str("No completion was cut short by a time limit, a steer or a fold.");
    } else {
        out.push_str(
            "Cut short, the provider reporting nothing, so their tokens are estimates in none of the totals above:\n",
        );
        for cut in &report.cut {
            let _ = writeln!(out, "- {}", cut_line(&name(&cut.agent), cut));
        }
    }
    out.trim_end().to_string()
}

fn line(name: &str, row: &UsageRow) -> String {
    let cached = percent(row.cached_prompt_tokens, row.prompt_tokens);
    let cost = match row.cost_micro_usd {
        Some(micro) if row.turns_with_cost == row.turns => format!("cost {}", dollars(micro)),
        Some(micro) => format!(
            "cost {} as reported for {} of the {} turns; the provider reported none for the rest",
            dollars(micro),
            row.turns_with_cost,
            row.turns
        ),
        None => "no cost reported".to_string(),
    };
    format!(
        "{name} on `{}`: {} turn{}; prompt {} tokens ({} cached, {cached}); completion {} tokens ({} reasoning); {cost}",
        row.model,
        row.turns,
        plural(row.turns),
        thousands(row.prompt_tokens),
        thousands(row.cached_prompt_tokens),
        thousands(row.completion_tokens),
        thousands(row.reasoning_tokens),
    )
}

fn cut_line(name: &str, cut: &CutRow) -> String {
    let by = match cut.by {
        CutBy::TimeLimit => "its completion time limit",
        CutBy::Steer => "a steer",
        CutBy::Fold => "a fold (a further post from the same person)",
    };
    format!(
        "{name} on `{}`: {} completion{} cut by {by}, about {} tokens",
        cut.model,
        cut.completions,
        plural(cut.completions),
        thousands(cut.estimated_tokens)
    )
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "0%".into();
    }
    format!("{}%", part * 100 / whole)
}

/// Millionths of a US dollar, as dollars.
fn dollars(micro: i64) -> String {
    let sign = if micro < 0 { "-" } else { "" };
    let micro = micro.unsigned_abs();
    format!("{sign}${}.{:06}", micro / 1_000_000, micro % 1_000_000)
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn thousands(n: u64) -> String {
    collegium_web_page::thousands(usize::try_from(n).unwrap_or(usize::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s8_4_usage_names_cached_share_reasoning_cost_and_the_cut_apart() {
        let names = [("mira".to_string(), "Mira".to_string())].into();
        let report = UsageReport {
            rows: vec![
                UsageRow {
                    agent: "mira".into(),
                    model: "big".into(),
                    turns: 2,
                    prompt_tokens: 2_600,
                    cached_prompt_tokens: 1_800,
                    completion_tokens: 130,
                    reasoning_tokens: 15,
                    cost_micro_usd: Some(12_500),
                    turns_with_cost: 1,
                },
                UsageRow {
                    agent: "bo".into(),
                    model: "small".into(),
                    turns: 1,
                    prompt_tokens: 0,
                    ..UsageRow::default()
                },
            ],
            cut: vec![CutRow {
                agent: "mira".into(),
                model: "big".into(),
                by: CutBy::TimeLimit,
                completions: 1,
                estimated_tokens: 1_425,
            }],
        };
        let text = render(&report, &names, "Sun 6 Dec 01:00 (UTC)");
        assert_eq!(
            text,
            "Usage over turns that ended since Sun 6 Dec 01:00 (UTC), in every channel, abandoned turns included:\n\
             - Mira on `big`: 2 turns; prompt 2,600 tokens (1,800 cached, 69%); completion 130 tokens (15 reasoning); cost $0.012500 as reported for 1 of the 2 turns; the provider reported none for the rest\n\
             - bo on `small`: 1 turn; prompt 0 tokens (0 cached, 0%); completion 0 tokens (0 reasoning); no cost reported\n\
             Cut short, the provider reporting nothing, so their tokens are estimates in none of the totals above:\n\
             - Mira on `big`: 1 completion cut by its completion time limit, about 1,425 tokens"
        );
        let empty = render(&UsageReport::default(), &names, "then");
        assert!(empty.contains("no turn ended in that time"), "{empty}");
        assert!(empty.ends_with("No completion was cut short by a time limit, a steer or a fold."));
    }
}
