//! What the agent holds, asked by every text that would name another tool (§3.4: a text names
//! a tool only where the agent holds it, so that the next step it names is one it can take).

/// The display name of the browser's entry point, the one tool these texts name.
pub const NAVIGATE: &str = "web::navigate";

/// Answers whether the agent holds a tool, named in display form (`web::navigate`).
pub trait Holds {
    fn holds(&self, tool: &str) -> bool;
}

impl<F: Fn(&str) -> bool> Holds for F {
    fn holds(&self, tool: &str) -> bool {
        self(tool)
    }
}

impl Holds for [&str] {
    fn holds(&self, tool: &str) -> bool {
        self.contains(&tool)
    }
}

impl<const N: usize> Holds for [&str; N] {
    fn holds(&self, tool: &str) -> bool {
        self.contains(&tool)
    }
}
