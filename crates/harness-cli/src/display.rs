//! How a run looks: on a terminal, streamed text and one line per tool call; for scripts,
//! one JSON object per line. Each fact of a run is rendered once, by
//! `harness_app::render::Facts`, for the run as it happens ([`Terminal`]) and for
//! `harness show`, which replays its transcript.

use std::io::{self, IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use harness_agent::{Event, Observer, Record};
use serde_json::Value;

use crate::shown::{self, Shown, shown};

pub(crate) use harness_app::render::Style;
use harness_app::render::{Facts, View};

/// Where everything for a person is printed, on stdout or stderr. It takes only [`Shown`]
/// text, and JSON that [`shown::json`] made safe, so nothing from a model, a file, a
/// command or a path reaches a terminal unsanitized; no other module writes to either
/// stream (a test checks).
pub(crate) struct Out {
    stream: Stream,
}

#[derive(Clone, Copy)]
enum Stream {
    Stdout,
    Stderr,
}

impl Out {
    pub(crate) fn stdout() -> Out {
        Out {
            stream: Stream::Stdout,
        }
    }

    pub(crate) fn stderr() -> Out {
        Out {
            stream: Stream::Stderr,
        }
    }

    /// Writes `text` as it is.
    pub(crate) fn print(&mut self, text: &Shown) -> io::Result<()> {
        self.write(text.as_str())
    }

    /// Writes `text` and a newline.
    pub(crate) fn line(&mut self, text: &Shown) -> io::Result<()> {
        let mut line = String::with_capacity(text.as_str().len() + 1);
        line.push_str(text.as_str());
        line.push('\n');
        self.write(&line)
    }

    /// Writes `value` as one line of JSON.
    pub(crate) fn json(&mut self, value: &Value) -> io::Result<()> {
        let mut line = shown::json(value);
        line.push('\n');
        self.write(&line)
    }

    /// Writes JSON text read from a file, as it is but for what [`shown::json_text`] escapes.
    pub(crate) fn json_text(&mut self, text: &str) -> io::Result<()> {
        self.write(&shown::json_text(text))
    }

    /// The one place bytes go out: every caller above made them safe.
    fn write(&mut self, text: &str) -> io::Result<()> {
        match self.stream {
            Stream::Stdout => {
                let mut out = io::stdout().lock();
                out.write_all(text.as_bytes())?;
                out.flush()
            }
            Stream::Stderr => {
                let mut out = io::stderr().lock();
                out.write_all(text.as_bytes())?;
                out.flush()
            }
        }
    }
}

/// Where tracing logs go: stderr, sanitized like everything else, since a log line quotes
/// paths and commands. (So logs have no colours: they would be escaped.)
pub(crate) fn log_writer() -> LogWriter {
    LogWriter
}

/// See [`log_writer`].
pub(crate) struct LogWriter;

impl Write for LogWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        Out::stderr().print(&Shown::text(&String::from_utf8_lossy(bytes)))?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Stdout's colours: colours when stdout is a terminal and `NO_COLOR` is unset or empty.
/// Only the printer's module asks what stdout is.
pub(crate) fn stdout_style() -> Style {
    Style::choose(
        io::stdout().is_terminal(),
        std::env::var_os("NO_COLOR").as_deref(),
    )
}

/// Shows a run on a terminal or in a log: the model's text as it streams, one compact line
/// per tool call, the diff of each edit, the verification, and notes on checkpoints.
///
/// Each fact the transcript keeps is rendered from its record by [`Facts`], as `harness show`
/// renders it; what only a live view shows (waiting for the model, streamed text, a check
/// starting) is this observer's own.
pub(crate) struct Terminal {
    style: Style,
    /// The renderer of each fact, in its live view.
    facts: Facts,
    /// Whether stdout is a terminal, so a spinner may overwrite its line.
    spin: bool,
    spinner: Option<Spinner>,
    /// True if and only if the cursor is at the start of a line.
    at_line_start: bool,
    /// The bytes of the current reply's text shown so far, against [`REPLY_SHOWN_BYTES`].
    reply_shown: usize,
}

/// The most bytes of one reply's text shown as it streams. A real reply is a few kilobytes;
/// a broken or hostile server may send megabytes (the client stops it at its text limit,
/// 8 MiB), which would bury everything else the run shows.
pub(crate) const REPLY_SHOWN_BYTES: usize = 64 * 1024;

impl Terminal {
    pub(crate) fn new(style: Style) -> Terminal {
        Terminal {
            style,
            facts: Facts::new(style, View::Live, crate::program::program()),
            spin: io::stdout().is_terminal(),
            spinner: None,
            at_line_start: true,
            reply_shown: 0,
        }
    }

    fn stop_spinner(&mut self) {
        if let Some(spinner) = self.spinner.take() {
            spinner.stop();
        }
    }

    /// Prints `text` on a line of its own.
    fn line(&mut self, text: &Shown) {
        let mut out = Out::stdout();
        if !self.at_line_start {
            let _ = out.print(&shown!("\n"));
        }
        let _ = out.line(text);
        self.at_line_start = true;
    }

    /// What only a live view shows of `event`: the wait for the model, its text as it
    /// streams, the end of that text, a check starting.
    fn live_only(&mut self, event: &Event<'_>) {
        match event {
            Event::Waiting { .. } => {
                self.reply_shown = 0;
                if self.spin {
                    if !self.at_line_start {
                        self.line(&Shown::default());
                    }
                    self.spinner = Some(Spinner::start());
                }
            }
            Event::Text { text, .. } => {
                self.stop_spinner();
                self.stream(text);
            }
            Event::Replied { .. } => {
                self.stop_spinner();
                if !self.at_line_start {
                    self.line(&Shown::default());
                }
            }
            Event::VerificationStarted {
                attempt,
                command,
                reason,
            } => {
                let note = shown!(
                    "▸ verify {}  (check {}, {})",
                    command,
                    attempt,
                    reason.describe()
                );
                self.line(&self.style.bold(&note));
            }
            Event::Finished { .. } => self.stop_spinner(),
            _ => {}
        }
    }

    /// Prints a piece of the reply's text, up to [`REPLY_SHOWN_BYTES`] of the reply.
    fn stream(&mut self, text: &str) {
        let room = REPLY_SHOWN_BYTES.saturating_sub(self.reply_shown);
        if room == 0 {
            return;
        }
        let mut end = text.len().min(room);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let piece = &text[..end];
        let _ = Out::stdout().print(&Shown::text(piece));
        if !piece.is_empty() {
            self.at_line_start = piece.ends_with('\n');
        }
        self.reply_shown = if end < text.len() {
            // Past the limit: say so once, and show nothing more of this reply.
            let note = shown!(
                "[… the rest of this reply is not shown: over {} KiB]",
                REPLY_SHOWN_BYTES / 1024
            );
            self.line(&self.style.dim(&note));
            REPLY_SHOWN_BYTES
        } else {
            self.reply_shown + end
        };
    }
}

impl Observer for Terminal {
    fn on_event(&mut self, event: &Event<'_>) {
        self.live_only(event);
        // The run's start is shown by its header, a tool line when the call ends: the
        // live view of those facts is empty, or they have no record yet.
        if let Some(record) = Record::of_event(event) {
            for line in self.facts.lines(&record) {
                self.line(&line);
            }
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
        let _ = Out::stdout().json(value);
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
    /// Everything printed goes through [`Out`], which takes only [`Shown`] text: no other
    /// module may reach stdout or stderr, nor make a [`Shown`] without sanitizing.
    #[test]
    fn every_print_goes_through_out() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let files = harness_testkit::sources::rust_sources(&src);
        assert!(files.len() > 10, "found the sources: {files:?}");
        let forbidden = [
            "println!",
            "print!(",
            "eprintln!",
            "eprint!(",
            "dbg!(",
            "io::stdout",
            "io::stderr",
            "stdout()",
            "stderr()",
            "Shown::composed",
            "Shown(",
        ];
        for file in files {
            let name = file
                .strip_prefix(&src)
                .expect("below src")
                .display()
                .to_string();
            let allowed: &[&str] = match name.as_str() {
                // The printer itself and the spinner's own escape codes.
                "display.rs" => &[
                    "io::stdout",
                    "io::stderr",
                    "stdout()",
                    "stderr()",
                    "Shown::composed",
                ],
                // The type and its constructors.
                "shown.rs" => &["Shown::composed", "Shown("],
                _ => &[],
            };
            let text = std::fs::read_to_string(&file).expect("read a source file");
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for pattern in forbidden {
                if allowed.contains(&pattern) {
                    continue;
                }
                let found = code.lines().find(|line| {
                    // The printer's own constructors, and the choice of colours.
                    let line = line
                        .trim_start()
                        .replace("Out::stdout()", "")
                        .replace("Out::stderr()", "")
                        .replace("stdout_style()", "");
                    !line.starts_with("//") && line.contains(pattern)
                });
                assert_eq!(
                    found, None,
                    "{name} uses {pattern}: print through display::Out"
                );
            }
        }
    }
}
