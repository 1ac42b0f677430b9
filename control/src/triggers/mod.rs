//! Triggers (§4.2): deterministic code deciding that work has arrived for an
//! agent. So far only the schedule's decision lives here: when a declared
//! recurrence comes due. Recording, the idle gate and the announcement are
//! not built yet.

pub mod schedule;

pub use schedule::{Recurrence, RecurrenceError};
