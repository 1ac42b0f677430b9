//! `collegium-plugin-bookmark`: the plugin directory `bookmark`'s `serve`.

fn main() -> std::process::ExitCode {
    bookmark::plugin().serve()
}
