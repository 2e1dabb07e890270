//! How a run looks: on a terminal, streamed text and one line per tool call; for scripts,
//! one JSON object per line.

use std::io::{self, IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use harness_agent::{Event, Observer};
use serde_json::Value;

/// Colors for a terminal, or none.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Style {
    color: bool,
}

impl Style {
    /// Colors when stdout is a terminal and `NO_COLOR` is unset or empty.
    pub(crate) fn for_stdout() -> Style {
        Style::choose(
            io::stdout().is_terminal(),
            std::env::var_os("NO_COLOR").as_deref(),
        )
    }

    /// Colors for a terminal, unless `no_color` (the `NO_COLOR` variable) is set to anything
    /// but the empty string, as <https://no-color.org> asks.
    fn choose(terminal: bool, no_color: Option<&std::ffi::OsStr>) -> Style {
        let no_color = no_color.is_some_and(|value| !value.is_empty());
        Style {
            color: terminal && !no_color,
        }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    pub(crate) fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }

    pub(crate) fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }

    pub(crate) fn red(self, text: &str) -> String {
        self.paint("31", text)
    }

    pub(crate) fn green(self, text: &str) -> String {
        self.paint("32", text)
    }

    pub(crate) fn yellow(self, text: &str) -> String {
        self.paint("33", text)
    }

    fn cyan(self, text: &str) -> String {
        self.paint("36", text)
    }

    /// A unified diff, each line colored by its kind.
    pub(crate) fn diff(self, diff: &str) -> String {
        let mut out = String::with_capacity(diff.len());
        for line in diff.lines() {
            let painted = if line.starts_with("+++") || line.starts_with("---") {
                self.bold(line)
            } else if line.starts_with('+') {
                self.green(line)
            } else if line.starts_with('-') {
                self.red(line)
            } else if line.starts_with("@@") {
                self.cyan(line)
            } else if line.starts_with("diff --git") || line.starts_with("index ") {
                self.bold(line)
            } else {
                line.to_owned()
            };
            out.push_str(&painted);
            out.push('\n');
        }
        out
    }
}

/// Shows a run on a terminal or in a log: the model's text as it streams, one compact line
/// per tool call, the diff of each edit, the verification, and notes on checkpoints.
pub(crate) struct Terminal {
    style: Style,
    /// Whether stdout is a terminal, so a spinner may overwrite its line.
    spin: bool,
    spinner: Option<Spinner>,
    /// True if and only if the cursor is at the start of a line.
    at_line_start: bool,
}

/// The most lines of an edit's diff shown while the run goes on (`harness diff` shows all).
const DIFF_LINES: usize = 40;

/// The most lines of a failed verification's output shown.
const FAILURE_LINES: usize = 12;

impl Terminal {
    pub(crate) fn new(style: Style) -> Terminal {
        Terminal {
            style,
            spin: io::stdout().is_terminal(),
            spinner: None,
            at_line_start: true,
        }
    }

    fn stop_spinner(&mut self) {
        if let Some(spinner) = self.spinner.take() {
            spinner.stop();
        }
    }

    /// Prints `text` on a line of its own.
    fn line(&mut self, text: &str) {
        let mut out = io::stdout().lock();
        if !self.at_line_start {
            let _ = writeln!(out);
        }
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
        self.at_line_start = true;
    }

    fn tool_line(&mut self, step: u32, tool: &str, target: &str, detail: &str, is_error: bool) {
        let detail = if is_error {
            self.style.red(detail)
        } else {
            self.style.dim(detail)
        };
        let subject = if target.is_empty() {
            tool.to_owned()
        } else {
            format!("{tool} {target}")
        };
        // Step 0 is the harness's own look around, shown to the model before its first turn.
        let note = if step == 0 {
            self.style.dim("  (head start, for the model)")
        } else {
            String::new()
        };
        self.line(&format!(
            "{} {}  {detail}{note}",
            self.style.cyan("▸"),
            subject
        ));
    }
}

impl Observer for Terminal {
    fn on_event(&mut self, event: &Event<'_>) {
        match event {
            Event::Waiting { .. } if self.spin => {
                if !self.at_line_start {
                    self.line("");
                }
                self.spinner = Some(Spinner::start());
            }
            Event::Text { text, .. } => {
                self.stop_spinner();
                let mut out = io::stdout().lock();
                let _ = write!(out, "{text}");
                let _ = out.flush();
                if !text.is_empty() {
                    self.at_line_start = text.ends_with('\n');
                }
            }
            Event::Replied { .. } => {
                self.stop_spinner();
                if !self.at_line_start {
                    self.line("");
                }
            }
            Event::ToolFinished {
                step,
                tool,
                target,
                detail,
                is_error,
                output,
                ..
            } => {
                self.tool_line(*step, tool, target, detail, *is_error);
                if *is_error {
                    let first = output.lines().next().unwrap_or_default();
                    self.line(&format!("  {}", self.style.dim(first)));
                } else if matches!(*tool, "edit_file" | "write_file") && !output.is_empty() {
                    let shown: Vec<&str> = output.lines().take(DIFF_LINES).collect();
                    let mut diff = self.style.diff(&shown.join("\n"));
                    let total = output.lines().count();
                    if total > DIFF_LINES {
                        diff.push_str(&self.style.dim(&format!(
                            "[… {} more lines: harness diff shows all]\n",
                            total - DIFF_LINES
                        )));
                    }
                    self.line(diff.trim_end());
                }
            }
            Event::Nudged { message, .. } => {
                let note = format!("! harness to model: {message}");
                self.line(&self.style.yellow(&note));
            }
            Event::ContextTrimmed { elided, .. } => {
                let note = format!(
                    "· elided {elided} older tool result(s) to fit the model's context window"
                );
                self.line(&self.style.dim(&note));
            }
            Event::Checkpoint { number, .. } => {
                let note = format!("· checkpoint {number}");
                self.line(&self.style.dim(&note));
            }
            Event::Tampered {
                command, findings, ..
            } => {
                let note = format!(
                    "! the command `{command}` changed .git, which is not allowed: {}",
                    findings.join("; ")
                );
                self.line(&self.style.yellow(&note));
            }
            Event::CheckpointFailed { error, .. } => {
                let note = format!("! {error}");
                self.line(&self.style.yellow(&note));
            }
            Event::VerificationStarted { attempt, command } => {
                let note =
                    format!("▸ verify {command}  (check {attempt}, the model said it was done)");
                self.line(&self.style.bold(&note));
            }
            Event::VerificationFinished {
                passed,
                detail,
                output,
                ..
            } => {
                if *passed {
                    self.line(
                        &self
                            .style
                            .green(&format!("✔ verification passed  {detail}")),
                    );
                } else {
                    self.line(&self.style.red(&format!("✘ verification failed  {detail}")));
                    let lines: Vec<&str> = output.lines().collect();
                    let tail = &lines[lines.len().saturating_sub(FAILURE_LINES)..];
                    for line in tail {
                        self.line(&format!("  {}", self.style.dim(line)));
                    }
                }
            }
            Event::Finished { .. } => self.stop_spinner(),
            // Started is shown by the run's header; the tool line comes when the call ends.
            _ => {}
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        self.stop_spinner();
    }
}

/// Prints each event as one line of JSON.
pub(crate) struct JsonLines;

impl JsonLines {
    /// Prints `value` as one line.
    pub(crate) fn print(value: &Value) {
        let mut out = io::stdout().lock();
        let _ = writeln!(out, "{value}");
        let _ = out.flush();
    }
}

impl Observer for JsonLines {
    fn on_event(&mut self, event: &Event<'_>) {
        if let Ok(value) = serde_json::to_value(event) {
            JsonLines::print(&value);
        }
    }
}

/// "waiting for the model" with a turning wheel and the seconds waited, on stdout.
struct Spinner {
    running: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Spinner {
    fn start() -> Spinner {
        let running = Arc::new(AtomicBool::new(true));
        let flag = Arc::clone(&running);
        let thread = thread::Builder::new()
            .name("harness-spinner".to_owned())
            .spawn(move || {
                let frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
                let started = Instant::now();
                let mut frame = 0;
                while flag.load(Ordering::Relaxed) {
                    let mut out = io::stdout().lock();
                    let _ = write!(
                        out,
                        "\r{} waiting for the model ({}s)",
                        frames[frame % frames.len()],
                        started.elapsed().as_secs()
                    );
                    let _ = out.flush();
                    drop(out);
                    frame += 1;
                    thread::sleep(Duration::from_millis(100));
                }
                let mut out = io::stdout().lock();
                let _ = write!(out, "\r\x1b[2K");
                let _ = out.flush();
            })
            .ok();
        Spinner { running, thread }
    }

    fn stop(mut self) {
        self.running.store(false, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn color_only_on_a_terminal_and_never_with_no_color() {
        let cases: [(bool, Option<&str>, bool); 6] = [
            (true, None, true),
            (true, Some(""), true),
            (true, Some("1"), false),
            (true, Some("0"), false),
            (false, None, false),
            (false, Some("1"), false),
        ];
        for (terminal, no_color, color) in cases {
            let style = Style::choose(terminal, no_color.map(OsStr::new));
            assert_eq!(
                style.color, color,
                "terminal {terminal}, NO_COLOR {no_color:?}"
            );
            let red = style.red("x");
            assert_eq!(red != "x", color, "{red:?}");
        }
    }

    #[test]
    fn diffs_are_colored_line_by_line_only_with_color() {
        let diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n same";
        let plain = Style { color: false }.diff(diff);
        assert_eq!(plain, format!("{diff}\n"));
        let colored = Style { color: true }.diff(diff);
        assert!(colored.contains("\x1b[31m-old\x1b[0m"));
        assert!(colored.contains("\x1b[32m+new\x1b[0m"));
        assert!(
            colored.contains("\x1b[1m+++ b/x\x1b[0m"),
            "headers are not additions"
        );
        assert!(colored.contains("\x1b[36m@@ -1 +1 @@\x1b[0m"));
        assert!(colored.ends_with(" same\n"));
    }
}
