//! `harness tool`: call one of the model's tools by hand, exactly as the model would.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;
use clap::Args;
use serde_json::Value;

use crate::commands::ConfinementFlags;
use crate::display::Out;
use crate::exit;
use crate::shown::Shown;
use crate::{isolation, signals};
use harness_app::{Overrides, Settings, toolbox};

/// Call one of the model's tools by hand.
///
/// The call goes through exactly what a model's call in `harness run` goes through: the
/// same settings (~/.config/harness/config.toml, harness.toml in the workspace, then the
/// flags), the same argument validation, workspace confinement, deny rules, protected files
/// (.git/, harness.toml), command policy, timeouts, environment and redaction. The result
/// is printed as the model reads it, except that control characters and invisible format
/// characters (ESC, \r, U+202E, ...) are shown as escapes such as \x1b.
///
/// Examples:
///
///   harness tool read_file '{"path": "src/main.rs", "start_line": 10}'
///
///   harness tool --workspace ../project run_command '{"argv": ["sudo", "ls"]}'
///
///   harness tool --allow cargo run_command '{"argv": ["cargo", "test"]}'
#[derive(Debug, Args)]
#[command(
    verbatim_doc_comment,
    about = "Call one of the model's tools by hand, as the model would",
    after_help = exit::help(exit::Help::Tool)
)]
pub(crate) struct ToolCommand {
    /// The workspace the tool works in: paths are confined to it, commands run in it.
    #[arg(long, value_name = "DIR", default_value = ".")]
    workspace: PathBuf,

    /// Seconds a command may run: the timeout of a call that sets none, and the most a call
    /// may ask for. [default: the configuration's command_timeout, else 30; at most 600]
    #[arg(long, value_name = "S", value_parser = clap::value_parser!(u64).range(1..))]
    timeout: Option<u64>,

    #[command(flatten)]
    confinement: ConfinementFlags,

    /// Print the tools' specs (name, description, JSON Schema of the arguments) as JSON, as
    /// the model is offered them.
    #[arg(long, conflicts_with = "name")]
    list: bool,

    /// The tool to call: read_file, write_file, edit_file, list_dir, search_text or
    /// run_command.
    #[arg(value_name = "NAME", required_unless_present = "list")]
    name: Option<String>,

    /// The arguments, as the JSON object the model would send.
    #[arg(value_name = "JSON-ARGS", default_value = "{}")]
    arguments: String,
}

impl ToolCommand {
    /// What the flags say, for [`Settings::resolve`].
    fn overrides(&self) -> Overrides {
        self.confinement.apply(Overrides {
            command_timeout: self.timeout,
            max_command_timeout: self.timeout,
            ..Overrides::default()
        })
    }
}

/// Prints the specs, or calls the tool and prints its result.
pub(crate) fn exec(command: ToolCommand) -> anyhow::Result<ExitCode> {
    if command.list {
        let specs = serde_json::to_string_pretty(harness_schema::catalogue())
            .context("serializing the tool specs")?;
        Out::stdout().json_text(&format!("{specs}\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(name) = command.name.as_deref() else {
        unreachable!("clap requires NAME unless --list is given");
    };
    let root = harness_app::workspace_root(&command.workspace)?;
    let settings = Settings::resolve(&root, &command.overrides())?;
    let (toolbox, choice) = toolbox::build(&root, &settings.toolbox)?;
    for warning in isolation::fallback_warnings(&choice) {
        Out::stderr().line(&Shown::line(&warning))?;
    }
    toolbox::adopt_escaping_commands();
    let interrupter = toolbox.interrupter();
    let interrupted = Arc::new(AtomicBool::new(false));
    // The first signal interrupts the command, which then ends as the model would see it
    // end; a second one kills it and ends the harness at once.
    signals::on_ending_signal({
        let interrupted = Arc::clone(&interrupted);
        move |received| {
            interrupted.store(true, Ordering::SeqCst);
            if received == 1 {
                interrupter.interrupt();
            } else {
                signals::kill_commands_and_exit(&interrupter, exit::INTERRUPTED);
            }
        }
    });
    // A string holding JSON, as OpenAI-compatible servers deliver arguments: the tool parses
    // it exactly as it would parse the model's.
    let result = toolbox.call(name, &Value::String(command.arguments));
    // What the model reads, made visible: a control character in a file or in a command's
    // output is shown as an escape here (the model is given the characters themselves).
    let shown = Shown::text(result.text());
    if shown.as_str().ends_with('\n') {
        Out::stdout().print(&shown)?;
    } else {
        Out::stdout().line(&shown)?;
    }
    Ok(if interrupted.load(Ordering::SeqCst) {
        ExitCode::from(exit::INTERRUPTED)
    } else if result.is_error() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
