//! The page actions (§3.4 Browsing): `web::navigate`, `click`, `fill`,
//! `hover` and `select`, each run in the turn's own browser session and
//! answered with the page as markdown, or the typed refusal standing in its
//! place.

use collegium_proto::toolset::v1::ToolResult;

use crate::call::WebCall;
use crate::result;
use crate::session::{Action, Outcome, Sessions};

/// The action a call asks for; a missing argument is named.
fn action(tool: &str, call: &WebCall) -> Result<Action, String> {
    let arguments = &call.arguments;
    let need = |value: &Option<String>, name: &str| {
        value
            .clone()
            .ok_or_else(|| format!("web::{tool} needs `{name}`"))
    };
    Ok(match tool {
        "navigate" => Action::Navigate {
            url: need(&arguments.url, "url")?,
        },
        "click" => Action::Click {
            reference: need(&arguments.reference, "ref")?,
        },
        "fill" => Action::Fill {
            reference: need(&arguments.reference, "ref")?,
            text: need(&arguments.text, "text")?,
        },
        "hover" => Action::Hover {
            reference: need(&arguments.reference, "ref")?,
        },
        "select" => Action::Select {
            reference: need(&arguments.reference, "ref")?,
            option: need(&arguments.option, "option")?,
        },
        other => return Err(format!("this worker serves no tool `{other}`")),
    })
}

pub async fn act(sessions: &Sessions, tool: &str, call: &WebCall) -> ToolResult {
    let action = match action(tool, call) {
        Ok(action) => action,
        Err(why) => return result::invalid(why),
    };
    let summary = match &action {
        Action::Navigate { url } => format!("navigate {url}"),
        other => format!("{} {}", tool, other.reference().unwrap_or_default()),
    };
    let holds = |t: &str| call.holds(t);
    match sessions.act(&call.turn, action, &holds).await {
        Outcome::Page(text) => result::success(text, None, summary),
        Outcome::Refused(text) => result::refusal(text, format!("{summary} — refused")),
        Outcome::Failed(text) => result::failure(text, format!("{summary} — failed")),
    }
}
