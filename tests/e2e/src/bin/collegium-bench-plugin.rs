//! `collegium-bench-plugin`: a plugin built with the SDK whose namespace is
//! `BENCH_PLUGIN_NAMESPACE`, so one binary can be installed as several
//! plugins (the `plugin_boot` bench: boot with five plugins). Its `serve`
//! script sets the variable.

use collegium_sdk::{Collection, Context, NoSettings, Plugin, Reply, ToolBuilder, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema)]
struct Entry {
    text: String,
}

impl Collection for Entry {
    const NAME: &'static str = "entries";
}

#[derive(Deserialize, JsonSchema)]
struct Text {
    text: String,
}

async fn echo(_: Context<NoSettings>, args: Text) -> Result<Reply, ToolError> {
    Ok(Reply::text(args.text))
}

fn main() -> std::process::ExitCode {
    let namespace = std::env::var("BENCH_PLUGIN_NAMESPACE").unwrap_or_else(|_| "bench".into());
    Plugin::<NoSettings>::new(namespace)
        .collection::<Entry>()
        .tool(
            ToolBuilder::new("echo", "Echoes.")
                .does_not_gate()
                .run(echo),
        )
        .serve()
}
