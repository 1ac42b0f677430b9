//! The page actions (§3.4 Browsing) and what each returns.

/// One page action, on refs of the latest snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Navigate { url: String },
    Click { reference: String },
    Fill { reference: String, text: String },
    Hover { reference: String },
    Select { reference: String, option: String },
}

impl Action {
    /// The tool the action is, as the model calls it.
    pub fn tool(&self) -> &'static str {
        match self {
            Self::Navigate { .. } => "web::navigate",
            Self::Click { .. } => "web::click",
            Self::Fill { .. } => "web::fill",
            Self::Hover { .. } => "web::hover",
            Self::Select { .. } => "web::select",
        }
    }

    pub fn reference(&self) -> Option<&str> {
        match self {
            Self::Navigate { .. } => None,
            Self::Click { reference }
            | Self::Fill { reference, .. }
            | Self::Hover { reference }
            | Self::Select { reference, .. } => Some(reference),
        }
    }
}

/// What an action came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The page after the action, as markdown.
    Page(String),
    /// A typed refusal the model reads; the turn goes on.
    Refused(String),
    /// Nothing the page did: this deployment could not run a browser.
    Failed(String),
}

impl Outcome {
    pub fn text(&self) -> &str {
        match self {
            Self::Page(t) | Self::Refused(t) | Self::Failed(t) => t,
        }
    }
}
