//! The fixed shares §3.8 names: a turn ceiling is never more than a fixed share
//! of the model's window (the rest being the completion still to be written and
//! the slack an estimate owes a tokeniser), and an agent that declares no
//! context budget gets a fixed share of its turn ceiling.

/// The most of a model's window a turn ceiling may claim, in percent.
pub const TURN_CEILING_PERCENT_OF_WINDOW: u64 = 75;

/// The context budget of an agent that declares none, in percent of its turn
/// ceiling: half, so a turn starts with as much room to work as it has history.
pub const DEFAULT_CONTEXT_BUDGET_PERCENT_OF_CEILING: u64 = 50;

/// The largest turn ceiling a model with this window allows.
pub fn max_turn_ceiling(context_window: u32) -> u32 {
    percent_of(context_window, TURN_CEILING_PERCENT_OF_WINDOW)
}

/// The context budget of an agent that declares none.
pub fn default_context_budget(turn_ceiling: u32) -> u32 {
    percent_of(turn_ceiling, DEFAULT_CONTEXT_BUDGET_PERCENT_OF_CEILING)
}

/// How long a tool result may be, in characters, before it enters a turn's
/// context as a view: a fixed share of the turn ceiling, at most a fixed
/// size (§3.8). The turn and `/collegium inspect` both read it here.
pub fn result_view_chars(turn_ceiling_tokens: u32) -> usize {
    let share = (turn_ceiling_tokens as usize) * 4 / 10;
    share.clamp(1_000, crate::tools::core::VIEW_MAX_CHARS)
}

fn percent_of(value: u32, percent: u64) -> u32 {
    // value * percent / 100 never exceeds value, so it fits back into u32.
    u32::try_from(u64::from(value) * percent / 100).unwrap_or(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_taken_exactly() {
        assert_eq!(max_turn_ceiling(128_000), 96_000);
        assert_eq!(default_context_budget(64_000), 32_000);
        assert_eq!(max_turn_ceiling(u32::MAX), 3_221_225_471);
    }
}
