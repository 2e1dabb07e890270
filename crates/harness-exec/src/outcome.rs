//! What a command did: how it ended, for how long, and what it printed.

use std::time::Duration;

use crate::isolation::{Repaired, SetAside};

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Status {
    /// It exited with this code. Non-zero is a result, not an error: failing
    /// tests are exactly what the model needs to read.
    Exited(i32),
    /// It was killed by this signal, not by the runner (a crash, or a signal
    /// from another process).
    Signaled(i32),
    /// It ran past this timeout and was killed with its whole process tree.
    TimedOut(Duration),
    /// It was interrupted through an [`Interrupter`](crate::Interrupter).
    Interrupted,
}

/// The result of a command that ran.
///
/// The output is stdout and stderr merged in the order they were written,
/// with ANSI escapes stripped, secrets redacted, and the middle cut out when it
/// is longer than the runner's output limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub(crate) status: Status,
    pub(crate) duration: Duration,
    pub(crate) output: String,
    pub(crate) truncated: bool,
    pub(crate) total_bytes: u64,
    pub(crate) total_lines: u64,
    pub(crate) set_aside: Vec<SetAside>,
    pub(crate) repaired: Vec<Repaired>,
}

impl Outcome {
    /// How the command ended.
    pub fn status(&self) -> Status {
        self.status
    }

    /// True if and only if the command exited with code 0.
    pub fn is_success(&self) -> bool {
        self.status == Status::Exited(0)
    }

    /// How long the run took, from the call to [`Runner::run`](crate::Runner::run)
    /// until every process it started was gone.
    pub fn duration(&self) -> Duration {
        self.duration
    }

    /// The output as the model sees it: when truncated, the head, a line
    /// `[… N bytes, M lines truncated …]`, and the tail.
    pub fn output(&self) -> &str {
        &self.output
    }

    /// True if and only if the middle of the output was cut out.
    pub fn is_truncated(&self) -> bool {
        self.truncated
    }

    /// Bytes of text the command wrote (after ANSI escapes were removed),
    /// including any that were cut.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// Lines the command wrote, including any that were cut; a last line
    /// without a newline counts.
    pub fn total_lines(&self) -> u64 {
        self.total_lines
    }

    /// What the command created at a protected name of the workspace (`.git`,
    /// a name the caller protects such as `harness.toml`) where there was nothing when it started, which the
    /// runner moved aside once every process of the command was gone. Empty
    /// without isolation, and whenever the command created no such path.
    pub fn set_aside(&self) -> &[SetAside] {
        &self.set_aside
    }

    /// What the command changed where its tier could not refuse it, and the runner put
    /// back once every process of it was gone: under Landlock, the kept paths (`.git`,
    /// the names the caller protects, the git directories of repositories in the workspace) and the
    /// places of hidden paths. Empty under bwrap, which refuses all of it, and without
    /// isolation, which keeps nothing.
    pub fn repaired(&self) -> &[Repaired] {
        &self.repaired
    }

    /// The outcome as text for the model: a first line saying how the command
    /// ended, then its output, then a line for each path [set aside] and each
    /// change [repaired](Outcome::repaired).
    ///
    /// The first line is `exit=CODE`, `killed by signal N (NAME)`,
    /// `Error: command exceeded Ns and was killed.`, or
    /// `Error: command was interrupted by the user.`
    ///
    /// [set aside]: Outcome::set_aside
    pub fn to_model_text(&self) -> String {
        let first = match self.status {
            Status::Exited(code) => format!("exit={code}"),
            Status::Signaled(signal) => {
                format!("killed by signal {signal} ({})", signal_name(signal))
            }
            Status::TimedOut(timeout) => {
                format!(
                    "Error: command exceeded {}s and was killed.",
                    timeout.as_secs_f64()
                )
            }
            Status::Interrupted => "Error: command was interrupted by the user.".to_owned(),
        };
        let mut text = first;
        let output = self.output.trim_end();
        if !output.is_empty() {
            text.push('\n');
            text.push_str(output);
        }
        for SetAside { created, moved_to } in &self.set_aside {
            let name = created
                .file_name()
                .unwrap_or(created.as_os_str())
                .to_string_lossy();
            let done = match moved_to {
                Ok(to) => format!("it was moved to {}, where nothing reads it", to.display()),
                Err(error) => format!("it could not be moved aside ({error}) and must be removed"),
            };
            text.push_str(&format!(
                "\nError: the command created {name}, which commands may not write; {done}."
            ));
        }
        for repaired in &self.repaired {
            let said = match repaired.change {
                crate::Change::Index => "Note",
                _ => "Error: commands may not change this",
            };
            text.push_str(&format!("\n{said}: {repaired}."));
        }
        text
    }
}

/// The conventional name of `signal` on Linux.
fn signal_name(signal: i32) -> &'static str {
    match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        10 => "SIGUSR1",
        11 => "SIGSEGV",
        12 => "SIGUSR2",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        24 => "SIGXCPU",
        25 => "SIGXFSZ",
        _ => "unknown signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(status: Status, output: &str) -> Outcome {
        Outcome {
            status,
            duration: Duration::from_millis(5),
            output: output.to_owned(),
            truncated: false,
            total_bytes: output.len() as u64,
            total_lines: 1,
            set_aside: Vec::new(),
            repaired: Vec::new(),
        }
    }

    #[test]
    fn each_path_set_aside_is_a_line_after_the_output() {
        let mut moved = outcome(Status::Exited(0), "done\n");
        moved.set_aside = vec![
            SetAside {
                created: "/w/harness.toml".into(),
                moved_to: Ok("/w/harness.toml.refused-1".into()),
            },
            SetAside {
                created: "/w/.git".into(),
                moved_to: Err("Permission denied".to_owned()),
            },
        ];
        assert_eq!(
            moved.to_model_text(),
            "exit=0\ndone\n\
             Error: the command created harness.toml, which commands may not write; it was moved \
             to /w/harness.toml.refused-1, where nothing reads it.\n\
             Error: the command created .git, which commands may not write; it could not be \
             moved aside (Permission denied) and must be removed."
        );
        assert_eq!(moved.set_aside().len(), 2);
    }

    #[test]
    fn model_text_per_status() {
        assert_eq!(
            outcome(Status::Exited(1), "boom\n").to_model_text(),
            "exit=1\nboom"
        );
        assert_eq!(outcome(Status::Exited(0), "").to_model_text(), "exit=0");
        assert_eq!(outcome(Status::Exited(0), "\n\n").to_model_text(), "exit=0");
        assert_eq!(
            outcome(Status::Signaled(11), "").to_model_text(),
            "killed by signal 11 (SIGSEGV)"
        );
        assert_eq!(
            outcome(Status::TimedOut(Duration::from_millis(500)), "partial\n").to_model_text(),
            "Error: command exceeded 0.5s and was killed.\npartial"
        );
        assert_eq!(
            outcome(Status::TimedOut(Duration::from_secs(30)), "").to_model_text(),
            "Error: command exceeded 30s and was killed."
        );
        assert_eq!(
            outcome(Status::Interrupted, "").to_model_text(),
            "Error: command was interrupted by the user."
        );
    }

    #[test]
    fn leading_whitespace_of_the_output_is_kept() {
        assert_eq!(
            outcome(Status::Exited(0), "  indented\n").to_model_text(),
            "exit=0\n  indented"
        );
    }

    #[test]
    fn success_is_exit_zero_only() {
        assert!(outcome(Status::Exited(0), "").is_success());
        assert!(!outcome(Status::Exited(1), "").is_success());
        assert!(!outcome(Status::Signaled(0), "").is_success());
        assert!(!outcome(Status::Interrupted, "").is_success());
    }

    #[test]
    fn signal_names() {
        let names: Vec<&str> = (1..=15).chain([24, 25, 64]).map(signal_name).collect();
        assert_eq!(
            names,
            [
                "SIGHUP",
                "SIGINT",
                "SIGQUIT",
                "SIGILL",
                "SIGTRAP",
                "SIGABRT",
                "SIGBUS",
                "SIGFPE",
                "SIGKILL",
                "SIGUSR1",
                "SIGSEGV",
                "SIGUSR2",
                "SIGPIPE",
                "SIGALRM",
                "SIGTERM",
                "SIGXCPU",
                "SIGXFSZ",
                "unknown signal"
            ]
        );
    }
}
