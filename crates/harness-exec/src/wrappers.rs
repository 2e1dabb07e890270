//! Looking through launcher programs (`env`, `nice`, `setsid`, `flock`, …) to
//! the command they run, so that `env sudo ls` is judged like `sudo ls`.
//!
//! Each launcher's options are parsed as its own `getopt_long` would parse
//! them: short options in clusters, values attached or in the next argument,
//! long options abbreviated to any unique prefix. An option the table does not
//! know makes the command opaque (which argument is the program depends on
//! whether that option takes a value), and the policy refuses it rather than
//! guess.

use std::collections::VecDeque;

/// The launchers the [`Policy`](crate::Policy) looks through to the command
/// they run, by program name (matched by the name as written and by the
/// name of the file it resolves to).
///
/// `harness sandbox explain` prints this list; anything else in front of a
/// program (a shell, an interpreter, a launcher not listed) is judged as the
/// program itself.
///
/// ```
/// assert!(harness_exec::LAUNCHERS.contains(&"setsid"));
/// assert!(!harness_exec::LAUNCHERS.contains(&"sh"));
/// ```
pub const LAUNCHERS: &[&str] = &[
    "env",
    "nice",
    "nohup",
    "setsid",
    "ionice",
    "taskset",
    "chrt",
    "flock",
    "timeout",
    "stdbuf",
    "time",
    "xargs",
    "command",
    "exec",
    "busybox",
    "unshare",
    "chroot",
    "nsenter",
    "setpriv",
    "prlimit",
    "numactl",
    "strace",
    "ltrace",
    "fakeroot",
    "eatmydata",
    "unbuffer",
    "sudo",
    "doas",
    "pkexec",
    "run0",
];

/// What looking through a launcher found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Unwrapped {
    /// Not a launcher, or a launcher that names no command (`env`, `timeout 5`).
    Program,
    /// The command the launcher runs.
    Command(Vec<String>),
    /// The launcher's arguments cannot be read with certainty; the reason.
    Opaque(String),
}

/// How a launcher's arguments are laid out before the command it runs.
struct Launcher {
    /// The program's basename.
    name: &'static str,
    /// Short options without a value.
    short_flags: &'static str,
    /// Short options that take a value, as `-n 5` or `-n5`.
    short_values: &'static str,
    /// Short options whose value is optional, so attached only (`-n1024`).
    short_optional: &'static str,
    /// Long options without a value (an optional value must be attached, as
    /// in `--mount=FILE`).
    long_flags: &'static [&'static str],
    /// Long options that take a value, as `--name value` or `--name=value`.
    long_values: &'static [&'static str],
    /// Options whose value is itself a command line to split into words
    /// (`env -S 'sudo ls'`).
    splits: &'static [&'static str],
    /// Options whose value is shell code, run by `sh -c` (`flock -c`).
    shell: &'static [&'static str],
    /// Operands before the command (the duration of `timeout`).
    operands: usize,
    /// Whether `NAME=value` assignments may come before the command (`env`).
    assignments: bool,
}

const fn launcher(name: &'static str) -> Launcher {
    Launcher {
        name,
        short_flags: "",
        short_values: "",
        short_optional: "",
        long_flags: &[],
        long_values: &[],
        splits: &[],
        shell: &[],
        operands: 0,
        assignments: false,
    }
}

/// Every long option accepts `--help` and `--version`; they run nothing.
const COMMON_LONG: &[&str] = &["help", "version"];

/// The option tables follow GNU coreutils, util-linux, findutils, GNU time,
/// strace, ltrace, fakeroot, sudo, doas, pkexec and systemd's `run0`.
const TABLE: &[Launcher] = &[
    Launcher {
        short_flags: "i0v",
        short_values: "uCSPa",
        long_flags: &[
            "ignore-environment",
            "null",
            "debug",
            "default-signal",
            "ignore-signal",
            "block-signal",
            "list-signal-handling",
        ],
        long_values: &["unset", "chdir", "split-string", "argv0"],
        splits: &["S", "split-string"],
        assignments: true,
        ..launcher("env")
    },
    Launcher {
        // `nice -10` is the old spelling of `nice -n 10`.
        short_flags: "0123456789",
        short_values: "n",
        long_values: &["adjustment"],
        ..launcher("nice")
    },
    launcher("nohup"),
    Launcher {
        short_flags: "cfw",
        long_flags: &["ctty", "fork", "wait"],
        ..launcher("setsid")
    },
    Launcher {
        short_flags: "tuPp",
        short_values: "cn",
        long_flags: &["ignore", "pid", "pgid", "uid"],
        long_values: &["class", "classdata"],
        ..launcher("ionice")
    },
    Launcher {
        short_flags: "acpe",
        long_flags: &["all-tasks", "cpu-list", "pid"],
        operands: 1,
        ..launcher("taskset")
    },
    Launcher {
        short_flags: "abdefiomprRv",
        short_values: "TPD",
        long_flags: &[
            "all-tasks",
            "batch",
            "deadline",
            "ext",
            "fifo",
            "idle",
            "max",
            "other",
            "pid",
            "rr",
            "reset-on-fork",
            "verbose",
        ],
        long_values: &["sched-runtime", "sched-period", "sched-deadline"],
        operands: 1,
        ..launcher("chrt")
    },
    Launcher {
        short_flags: "suxnoFv",
        short_values: "wEc",
        long_flags: &[
            "shared",
            "exclusive",
            "unlock",
            "nonblock",
            "nb",
            "close",
            "no-fork",
            "verbose",
            "fcntl",
        ],
        long_values: &["timeout", "wait", "conflict-exit-code", "command"],
        shell: &["c", "command"],
        operands: 1,
        ..launcher("flock")
    },
    Launcher {
        short_flags: "fpv",
        short_values: "sk",
        long_flags: &["foreground", "preserve-status", "verbose"],
        long_values: &["signal", "kill-after"],
        operands: 1,
        ..launcher("timeout")
    },
    Launcher {
        short_values: "ioe",
        long_values: &["input", "output", "error"],
        ..launcher("stdbuf")
    },
    Launcher {
        short_flags: "pavqV",
        short_values: "fo",
        long_flags: &["portability", "append", "verbose", "quiet"],
        long_values: &["format", "output"],
        ..launcher("time")
    },
    Launcher {
        short_flags: "0oprtx",
        short_values: "aEdILnPs",
        short_optional: "eil",
        long_flags: &[
            "null",
            "open-tty",
            "interactive",
            "no-run-if-empty",
            "verbose",
            "exit",
            "show-limits",
        ],
        long_values: &[
            "arg-file",
            "delimiter",
            "max-args",
            "max-procs",
            "max-chars",
            "max-lines",
            "process-slot-var",
            "eof",
            "replace",
        ],
        ..launcher("xargs")
    },
    Launcher {
        short_flags: "pvV",
        ..launcher("command")
    },
    Launcher {
        short_flags: "cl",
        short_values: "a",
        ..launcher("exec")
    },
    // `busybox APPLET ARGS`: the applet is the program.
    Launcher {
        long_flags: &["list", "list-full"],
        ..launcher("busybox")
    },
    Launcher {
        short_flags: "muinpUCTfrcl",
        short_values: "RwSG",
        long_flags: &[
            "mount",
            "uts",
            "ipc",
            "net",
            "pid",
            "user",
            "cgroup",
            "time",
            "fork",
            "kill-child",
            "mount-proc",
            "mount-binfmt",
            "map-root-user",
            "map-current-user",
            "map-auto",
            "keep-caps",
            "load-interp",
        ],
        long_values: &[
            "map-user",
            "map-group",
            "map-users",
            "map-groups",
            "propagation",
            "setgroups",
            "root",
            "wd",
            "setuid",
            "setgid",
            "monotonic",
            "boottime",
        ],
        ..launcher("unshare")
    },
    Launcher {
        long_flags: &["skip-chdir"],
        long_values: &["userspec", "groups"],
        operands: 1,
        ..launcher("chroot")
    },
    Launcher {
        short_flags: "aFZec",
        short_values: "tSGN",
        short_optional: "muinpCUTrwW",
        long_flags: &[
            "all",
            "mount",
            "uts",
            "ipc",
            "net",
            "pid",
            "cgroup",
            "user",
            "time",
            "root",
            "wd",
            "wdns",
            "no-fork",
            "preserve-credentials",
            "follow-context",
            "env",
            "join-cgroup",
            "keep-caps",
            "user-parent",
        ],
        long_values: &["target", "setuid", "setgid", "net-socket"],
        ..launcher("nsenter")
    },
    Launcher {
        short_flags: "d",
        long_flags: &[
            "dump",
            "nnp",
            "no-new-privs",
            "clear-groups",
            "keep-groups",
            "init-groups",
            "reset-env",
        ],
        long_values: &[
            "ruid",
            "euid",
            "rgid",
            "egid",
            "reuid",
            "regid",
            "groups",
            "inh-caps",
            "ambient-caps",
            "bounding-set",
            "securebits",
            "pdeathsig",
            "selinux-label",
            "apparmor-profile",
            "landlock-access",
            "landlock-rule",
            "ptracer",
        ],
        ..launcher("setpriv")
    },
    Launcher {
        // A resource's value is optional, so attached: `--nofile=1024`, `-n1024`.
        // Every short letter but `-p` and `-o` is a resource (`-v` is
        // `--as`); `--raw` and `--verbose` have none.
        short_values: "po",
        short_optional: "cdefilmnqrstuvxy",
        long_flags: &[
            "noheadings",
            "raw",
            "verbose",
            "core",
            "data",
            "nice",
            "fsize",
            "sigpending",
            "memlock",
            "rss",
            "nofile",
            "msgqueue",
            "rtprio",
            "stack",
            "cpu",
            "nproc",
            "as",
            "locks",
            "rttime",
        ],
        long_values: &["pid", "output"],
        ..launcher("prlimit")
    },
    Launcher {
        short_flags: "aHs",
        short_values: "iNmlpCPw",
        long_flags: &["all", "hardware", "show", "localalloc"],
        long_values: &[
            "interleave",
            "cpunodebind",
            "membind",
            "physcpubind",
            "preferred",
            "preferred-many",
            "weighted-interleave",
        ],
        ..launcher("numactl")
    },
    Launcher {
        short_flags: "cCdDfFhiknqrtTvVwxyYZ",
        short_values: "abeIoOpPsSuXEU",
        long_flags: &[
            "follow-forks",
            "output-separately",
            "summary-only",
            "no-abbrev",
        ],
        long_values: &[
            "trace", "signal", "status", "output", "attach", "user", "env",
        ],
        ..launcher("strace")
    },
    Launcher {
        short_flags: "bcCdfhiLrStTV",
        short_values: "aAeFlnopsuwx",
        long_flags: &["demangle", "library"],
        long_values: &["align", "indent", "output", "config"],
        ..launcher("ltrace")
    },
    Launcher {
        short_flags: "uv",
        short_values: "ilsb",
        long_flags: &["unknown-is-real"],
        long_values: &["faked", "lib", "fd-base"],
        ..launcher("fakeroot")
    },
    launcher("eatmydata"),
    Launcher {
        short_flags: "p",
        ..launcher("unbuffer")
    },
    Launcher {
        short_flags: "AbEeHiKklnPSsVv",
        short_values: "CDghpRrTtUu",
        long_flags: &[
            "askpass",
            "background",
            "preserve-env",
            "edit",
            "set-home",
            "login",
            "reset-timestamp",
            "remove-timestamp",
            "validate",
            "list",
            "non-interactive",
            "preserve-groups",
            "stdin",
            "shell",
            "bell",
        ],
        long_values: &[
            "close-from",
            "chdir",
            "group",
            "host",
            "prompt",
            "chroot",
            "role",
            "command-timeout",
            "type",
            "other-user",
            "user",
        ],
        ..launcher("sudo")
    },
    Launcher {
        short_flags: "nsL",
        short_values: "Cu",
        ..launcher("doas")
    },
    Launcher {
        long_flags: &["disable-internal-agent", "keep-cwd"],
        long_values: &["user"],
        ..launcher("pkexec")
    },
    Launcher {
        short_values: "ugD",
        long_flags: &["no-ask-password", "slice-inherit"],
        long_values: &[
            "user",
            "group",
            "chdir",
            "nice",
            "setenv",
            "property",
            "description",
            "slice",
            "unit",
            "background",
        ],
        ..launcher("run0")
    },
];

/// Looks through the launcher `name` given its arguments; `vars` gives the
/// values of the variables `env -S` may expand.
pub(crate) fn unwrap(
    name: &str,
    args: &[String],
    vars: &dyn Fn(&str) -> Option<String>,
) -> Unwrapped {
    let Some(launcher) = TABLE.iter().find(|launcher| launcher.name == name) else {
        return Unwrapped::Program;
    };
    match launcher.command(args, vars) {
        Ok(Some(command)) => Unwrapped::Command(command),
        Ok(None) => Unwrapped::Program,
        Err(reason) => Unwrapped::Opaque(reason),
    }
}

impl Launcher {
    /// The command this launcher runs with `args`, `None` when it runs none.
    fn command(
        &self,
        args: &[String],
        vars: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<Vec<String>>, String> {
        let mut rest: VecDeque<String> = args.iter().cloned().collect();
        // Options end at `--` or at the first operand, as with getopt's `+`.
        while let Some(arg) = rest.pop_front() {
            if arg == "--" {
                break;
            }
            if let Some(long) = arg.strip_prefix("--") {
                let (written, attached) = match long.split_once('=') {
                    Some((option, value)) => (option, Some(value.to_owned())),
                    None => (long, None),
                };
                let (option, takes_value) = self.long_option(written)?;
                let value = match attached {
                    Some(value) => Some(value),
                    None if takes_value => Some(
                        rest.pop_front()
                            .ok_or_else(|| format!("`{} --{option}` lacks its value", self.name))?,
                    ),
                    None => None,
                };
                if let Some(value) = value
                    && let Some(command) = self.value_command(option, value, &mut rest, vars)?
                {
                    return Ok(Some(command));
                }
                continue;
            }
            if let Some(cluster) = arg.strip_prefix('-').filter(|cluster| !cluster.is_empty()) {
                if let Some(command) = self.short_cluster(cluster, &mut rest, vars)? {
                    return Ok(Some(command));
                }
                continue;
            }
            if self.assignments && (arg == "-" || arg.contains('=')) {
                // `env -` is `env -i`; `NAME=value` sets a variable.
                continue;
            }
            rest.push_front(arg);
            break;
        }
        // The launcher's own operands (the duration of `timeout`) come first.
        if rest.len() <= self.operands {
            return Ok(None);
        }
        rest.drain(..self.operands);
        // `flock FILE -c 'shell code'`: the option comes after the operand.
        if let Some(first) = rest.front()
            && let Some(option) = first.strip_prefix('-').map(|o| o.trim_start_matches('-'))
            && self.shell.contains(&option)
        {
            let code = rest.get(1).cloned().unwrap_or_default();
            return Ok(Some(vec!["sh".to_owned(), "-c".to_owned(), code]));
        }
        Ok(Some(rest.into()))
    }

    /// Reads one cluster of short options (`-iu NAME`, `-n5`); the first one
    /// that takes a value ends the cluster. Returns the command when a value
    /// was shell code.
    fn short_cluster(
        &self,
        cluster: &str,
        rest: &mut VecDeque<String>,
        vars: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<Vec<String>>, String> {
        for (at, letter) in cluster.char_indices() {
            if self.short_values.contains(letter) {
                let attached = &cluster[at + letter.len_utf8()..];
                let value = if attached.is_empty() {
                    rest.pop_front()
                        .ok_or_else(|| format!("`{} -{letter}` lacks its value", self.name))?
                } else {
                    attached.to_owned()
                };
                let option = &cluster[at..at + letter.len_utf8()];
                return self.value_command(option, value, rest, vars);
            }
            if self.short_optional.contains(letter) {
                return Ok(None);
            }
            if !self.short_flags.contains(letter) {
                return Err(self.unknown(&format!("-{letter}")));
            }
        }
        Ok(None)
    }

    /// The long option `written` stands for (exactly, or as the unique
    /// option it abbreviates), and whether it takes a value.
    fn long_option(&self, written: &str) -> Result<(&'static str, bool), String> {
        let options = || {
            self.long_flags
                .iter()
                .chain(COMMON_LONG)
                .map(|option| (*option, false))
                .chain(self.long_values.iter().map(|option| (*option, true)))
        };
        // Exact first: `--user` is not an abbreviation of `--user-parent`.
        if let Some(exact) = options().find(|(option, _)| *option == written) {
            return Ok(exact);
        }
        let matching: Vec<(&'static str, bool)> = options()
            .filter(|(option, _)| option.starts_with(written))
            .collect();
        match matching.as_slice() {
            [only] => Ok(*only),
            _ => Err(self.unknown(&format!("--{written}"))),
        }
    }

    /// What an option's value does to the command: `env -S` puts its words
    /// in front of the rest, `flock -c` runs it with `sh -c`.
    fn value_command(
        &self,
        option: &str,
        value: String,
        rest: &mut VecDeque<String>,
        vars: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<Vec<String>>, String> {
        if self.shell.contains(&option) {
            return Ok(Some(vec!["sh".to_owned(), "-c".to_owned(), value]));
        }
        if self.splits.contains(&option) {
            let words = split_string(&value, vars)
                .map_err(|reason| format!("`{} -S` string {reason}", self.name))?;
            for word in words.into_iter().rev() {
                rest.push_front(word);
            }
        }
        Ok(None)
    }

    fn unknown(&self, option: &str) -> String {
        format!(
            "`{}` option `{option}` is not one the policy knows, so it cannot tell which \
             program runs; leave the option out or run the program directly",
            self.name
        )
    }
}

/// Splits an `env -S` string into words the way GNU `env` does: whitespace
/// separates words; `'…'` quotes literally (only `\\` and `\'` are escapes
/// in it); `"…"` quotes with escapes and `${NAME}` expanded; outside quotes a
/// backslash escapes (`\\`, `\"`, `\'`, `\$`, `\#`, `\_` a separator, or in
/// double quotes a space; `\n`, `\t`, `\r`, `\f`, `\v`; `\c` ends the
/// string); `#` at the start of a word starts a comment.
///
/// A variable `vars` does not know is an error: the policy cannot tell what
/// it stands for.
fn split_string(text: &str, vars: &dyn Fn(&str) -> Option<String>) -> Result<Vec<String>, String> {
    #[derive(PartialEq)]
    enum Quote {
        None,
        Single,
        Double,
    }
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote = Quote::None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, &quote) {
            ('\'', Quote::Single) | ('"', Quote::Double) => quote = Quote::None,
            ('\'', Quote::None) => {
                quote = Quote::Single;
                word.get_or_insert_default();
            }
            ('"', Quote::None) => {
                quote = Quote::Double;
                word.get_or_insert_default();
            }
            (' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c', Quote::None) => {
                words.extend(word.take());
            }
            ('#', Quote::None) if word.is_none() => break,
            ('\\', Quote::Single) => match chars.peek() {
                Some(&escaped @ ('\\' | '\'')) => {
                    chars.next();
                    word.get_or_insert_default().push(escaped);
                }
                _ => word.get_or_insert_default().push('\\'),
            },
            ('\\', _) => {
                let Some(escaped) = chars.next() else {
                    return Err("ends with a lone backslash".to_owned());
                };
                let literal = match escaped {
                    '\\' | '"' | '\'' | '$' | '#' => escaped,
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    'f' => '\x0c',
                    'v' => '\x0b',
                    '_' if quote == Quote::Double => ' ',
                    '_' => {
                        words.extend(word.take());
                        continue;
                    }
                    'c' if quote == Quote::None => {
                        words.extend(word.take());
                        return Ok(words);
                    }
                    other => return Err(format!("has an invalid escape `\\{other}`")),
                };
                word.get_or_insert_default().push(literal);
            }
            ('$', Quote::None | Quote::Double) => {
                if chars.next() != Some('{') {
                    return Err("uses `$` other than `${NAME}`".to_owned());
                }
                let mut name = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) if c == '_' || c.is_ascii_alphanumeric() => name.push(c),
                        _ => return Err("has an unterminated or invalid `${NAME}`".to_owned()),
                    }
                }
                let value = vars(&name).ok_or_else(|| {
                    format!("expands `${{{name}}}`, which the policy cannot see; write its value")
                })?;
                word.get_or_insert_default().push_str(&value);
            }
            (c, _) => word.get_or_insert_default().push(c),
        }
    }
    if quote != Quote::None {
        return Err("has an unterminated quote".to_owned());
    }
    words.extend(word);
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(name: &str) -> Option<String> {
        (name == "HOME").then(|| "/home/me".to_owned())
    }

    fn inner(argv: &[&str]) -> Unwrapped {
        let args: Vec<String> = argv[1..].iter().map(|s| s.to_string()).collect();
        unwrap(argv[0], &args, &vars)
    }

    fn command(words: &[&str]) -> Unwrapped {
        Unwrapped::Command(words.iter().map(|s| s.to_string()).collect())
    }

    macro_rules! unwraps {
        ($($name:ident: [$($arg:literal),*] => $expected:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(inner(&[$($arg),*]), $expected);
            }
        )*};
    }

    unwraps! {
        env_plain: ["env", "sudo", "ls"] => command(&["sudo", "ls"]);
        env_assignments: ["env", "A=1", "B=2", "sudo", "ls"] => command(&["sudo", "ls"]);
        env_ignore_environment: ["env", "-i", "sudo"] => command(&["sudo"]);
        env_dash: ["env", "-", "sudo"] => command(&["sudo"]);
        env_unset_separate: ["env", "-u", "HOME", "sudo"] => command(&["sudo"]);
        env_unset_attached: ["env", "-uHOME", "sudo"] => command(&["sudo"]);
        env_unset_in_cluster: ["env", "-iu", "HOME", "sudo"] => command(&["sudo"]);
        env_unset_long: ["env", "--unset", "HOME", "sudo"] => command(&["sudo"]);
        env_unset_long_equals: ["env", "--unset=HOME", "sudo"] => command(&["sudo"]);
        env_chdir: ["env", "-C", "/tmp", "sudo"] => command(&["sudo"]);
        env_flag_without_value: ["env", "--ignore-environment", "sudo"] => command(&["sudo"]);
        env_split_string: ["env", "-S", "sudo ls", "-l"] => command(&["sudo", "ls", "-l"]);
        env_split_string_attached: ["env", "-Ssudo ls"] => command(&["sudo", "ls"]);
        env_split_string_long: ["env", "--split-string=-i sudo ls"] => command(&["sudo", "ls"]);
        env_split_string_long_separate: ["env", "--split-string", "sudo ls"] => command(&["sudo", "ls"]);
        env_split_quoted: ["env", "-S", "\"mount\" --version"] => command(&["mount", "--version"]);
        env_split_home: ["env", "-S", "${HOME}/bin/x"] => command(&["/home/me/bin/x"]);
        env_split_empty: ["env", "-S", ""] => Unwrapped::Program;
        env_split_string_missing_value: ["env", "-S"] => Unwrapped::Opaque("`env -S` lacks its value".into());
        env_double_dash: ["env", "--", "sudo"] => command(&["sudo"]);
        env_alone: ["env"] => Unwrapped::Program;
        env_only_assignments: ["env", "A=1"] => Unwrapped::Program;
        env_help: ["env", "--help"] => Unwrapped::Program;
        nice_adjustment: ["nice", "-n", "5", "sudo"] => command(&["sudo"]);
        nice_negative_adjustment: ["nice", "-n", "-5", "sudo"] => command(&["sudo"]);
        nice_attached: ["nice", "-n10", "sudo"] => command(&["sudo"]);
        nice_old_style: ["nice", "-10", "sudo"] => command(&["sudo"]);
        nice_long: ["nice", "--adjustment", "5", "sudo"] => command(&["sudo"]);
        nohup_plain: ["nohup", "sudo", "ls"] => command(&["sudo", "ls"]);
        timeout_duration: ["timeout", "5", "sudo"] => command(&["sudo"]);
        timeout_signal: ["timeout", "-s", "KILL", "5", "sudo"] => command(&["sudo"]);
        timeout_kill_after: ["timeout", "-k", "1", "--preserve-status", "5s", "sudo"] => command(&["sudo"]);
        timeout_double_dash: ["timeout", "--", "5", "sudo"] => command(&["sudo"]);
        timeout_only_duration: ["timeout", "5"] => Unwrapped::Program;
        timeout_nothing: ["timeout"] => Unwrapped::Program;
        time_format: ["time", "-f", "%e", "-o", "t.txt", "sudo"] => command(&["sudo"]);
        stdbuf_modes: ["stdbuf", "-o", "L", "-eL", "sudo"] => command(&["sudo"]);
        stdbuf_long: ["stdbuf", "--output=L", "sudo"] => command(&["sudo"]);
        xargs_options: ["xargs", "-0", "-n", "1", "-P", "4", "-I", "{}", "rm", "{}"] => command(&["rm", "{}"]);
        xargs_optional_attached: ["xargs", "-i{}", "-l2", "rm"] => command(&["rm"]);
        xargs_arg_file: ["xargs", "-a", "list", "--max-args=2", "rm"] => command(&["rm"]);
        xargs_alone: ["xargs"] => Unwrapped::Program;
        sudo_cluster: ["sudo", "-Eu", "root", "ls"] => command(&["ls"]);
        doas_user: ["doas", "-u", "root", "ls"] => command(&["ls"]);
        pkexec_user: ["pkexec", "--user", "root", "ls"] => command(&["ls"]);
        setsid_fork: ["setsid", "-f", "ls"] => command(&["ls"]);
        taskset_mask: ["taskset", "-c", "0-3", "ls", "-l"] => command(&["ls", "-l"]);
        taskset_pid_mode: ["taskset", "-p", "1234"] => Unwrapped::Program;
        chrt_priority: ["chrt", "-f", "10", "ls"] => command(&["ls"]);
        chrt_pid_mode: ["chrt", "-p", "1234"] => Unwrapped::Program;
        flock_command: ["flock", "-w", "5", "/tmp/l", "ls"] => command(&["ls"]);
        flock_shell_after_file: ["flock", "/tmp/l", "-c", "ls; mount"] => command(&["sh", "-c", "ls; mount"]);
        flock_long_shell_after_file: ["flock", "/tmp/l", "--command", "ls"] => command(&["sh", "-c", "ls"]);
        flock_shell_option_first: ["flock", "-c", "ls", "/tmp/l"] => command(&["sh", "-c", "ls"]);
        flock_descriptor: ["flock", "9"] => Unwrapped::Program;
        busybox_applet: ["busybox", "mount", "/mnt"] => command(&["mount", "/mnt"]);
        chroot_root: ["chroot", "--userspec=1:1", "/srv/root", "ls"] => command(&["ls"]);
        prlimit_optional: ["prlimit", "--nofile=10", "-n10", "--pid", "1", "ls"] => command(&["ls"]);
        nsenter_optional: ["nsenter", "-t", "1", "-m", "-n/proc/1/ns/net", "ls"] => command(&["ls"]);
        unknown_short: ["setsid", "-q", "ls"] => Unwrapped::Opaque(
            "`setsid` option `-q` is not one the policy knows, so it cannot tell which program runs; \
             leave the option out or run the program directly".into()
        );
        exact_long_option_before_longer_ones: ["nsenter", "--user", "ls"] => command(&["ls"]);
        unique_abbreviation_of_a_long_value_option: ["nice", "--adj", "5", "sudo"] => command(&["sudo"]);
        unique_abbreviation_of_a_long_flag: ["setsid", "--fo", "ls"] => command(&["ls"]);
        ambiguous_abbreviation: ["env", "--ignore", "ls"] => Unwrapped::Opaque(
            "`env` option `--ignore` is not one the policy knows, so it cannot tell which program runs; \
             leave the option out or run the program directly".into()
        );
        exact_long_value_option: ["timeout", "--signal", "KILL", "5", "ls"] => command(&["ls"]);
        assignment_before_another_launcher_is_the_program: ["nice", "A=1", "ls"] => command(&["A=1", "ls"]);
        dash_before_another_launcher_is_the_program: ["nohup", "-", "ls"] => command(&["-", "ls"]);
        not_a_launcher: ["ls", "-l"] => Unwrapped::Program;
        shell_is_not_looked_through: ["sh", "-c", "sudo ls"] => Unwrapped::Program;
    }

    macro_rules! splits {
        ($($name:ident: $text:literal => $expected:expr;)*) => {$(
            #[test]
            fn $name() {
                let expected: Result<&[&str], &str> = $expected;
                let expected = expected
                    .map(|words| words.iter().map(|w| w.to_string()).collect::<Vec<_>>())
                    .map_err(str::to_owned);
                assert_eq!(split_string($text, &vars), expected);
            }
        )*};
    }

    splits! {
        split_words: "a  b\tc\nd" => Ok(&["a", "b", "c", "d"]);
        split_single_quotes: "'a b' c" => Ok(&["a b", "c"]);
        split_double_quotes: "\"a b\" c" => Ok(&["a b", "c"]);
        split_adjacent_quotes: "a'b'\"c\"d" => Ok(&["abcd"]);
        split_empty_quotes: "'' x" => Ok(&["", "x"]);
        split_single_keeps_backslash: "'a\\b'" => Ok(&["a\\b"]);
        split_single_escapes: "'a\\'b\\\\c'" => Ok(&["a'b\\c"]);
        split_single_keeps_dollar: "'${HOME}'" => Ok(&["${HOME}"]);
        split_double_expands: "\"${HOME}/x\"" => Ok(&["/home/me/x"]);
        split_bare_expands: "${HOME}" => Ok(&["/home/me"]);
        split_escapes: "\\\\\\\"\\'\\$\\#" => Ok(&["\\\"'$#"]);
        split_control_escapes: "a\\nb\\tc\\rd\\fe\\vf" => Ok(&["a\nb\tc\rd\x0ce\x0bf"]);
        split_underscore_separates: "a\\_b" => Ok(&["a", "b"]);
        split_underscore_in_double_quotes: "\"a\\_b\"" => Ok(&["a b"]);
        split_stop: "a b\\c d" => Ok(&["a", "b"]);
        split_comment: "a #b c" => Ok(&["a"]);
        split_hash_inside_word: "a#b" => Ok(&["a#b"]);
        split_hash_quoted: "'#a'" => Ok(&["#a"]);
        split_stop_in_double_quotes: "\"a\\c\"" => Err("has an invalid escape `\\c`");
        split_unknown_escape: "\\x" => Err("has an invalid escape `\\x`");
        split_lone_backslash: "a\\" => Err("ends with a lone backslash");
        split_unterminated_single: "'a" => Err("has an unterminated quote");
        split_unterminated_double: "\"a" => Err("has an unterminated quote");
        split_dollar_alone: "$HOME" => Err("uses `$` other than `${NAME}`");
        split_unterminated_variable: "${HOME" => Err("has an unterminated or invalid `${NAME}`");
        split_invalid_variable: "${A-B}" => Err("has an unterminated or invalid `${NAME}`");
        split_unknown_variable: "${NOPE}" => Err("expands `${NOPE}`, which the policy cannot see; write its value");
        split_nothing: "   " => Ok(&[]);
    }

    /// One command line per launcher that uses an option of each of its
    /// kinds (flags, values, optional values, long ones, operands), written
    /// from the programs' manuals: a kind missing from the table makes the
    /// launcher opaque or changes which word is the program.
    #[test]
    fn every_kind_of_option_of_every_launcher_is_read() {
        let mount = || command(&["mount"]);
        let cases: &[(&[&str], Unwrapped)] = &[
            (
                &[
                    "env", "-i", "-u", "X", "--null", "--unset", "Y", "A=1", "-S", "mount",
                ],
                mount(),
            ),
            (
                &["nice", "-5", "-n", "1", "--adjustment", "2", "mount"],
                mount(),
            ),
            (&["setsid", "-f", "--wait", "mount"], mount()),
            (
                &[
                    "ionice",
                    "-t",
                    "-c",
                    "3",
                    "--ignore",
                    "--classdata",
                    "7",
                    "mount",
                ],
                mount(),
            ),
            (&["taskset", "-a", "--cpu-list", "0", "mount"], mount()),
            (
                &[
                    "chrt",
                    "-f",
                    "-T",
                    "1",
                    "--reset-on-fork",
                    "--sched-period",
                    "2",
                    "0",
                    "mount",
                ],
                mount(),
            ),
            (
                &[
                    "flock",
                    "-x",
                    "-w",
                    "1",
                    "--nonblock",
                    "--conflict-exit-code",
                    "3",
                    "/l",
                    "mount",
                ],
                mount(),
            ),
            (
                &["flock", "/l", "-c", "mount"],
                command(&["sh", "-c", "mount"]),
            ),
            (
                &[
                    "timeout",
                    "-f",
                    "-s",
                    "KILL",
                    "--verbose",
                    "--kill-after",
                    "1",
                    "5",
                    "mount",
                ],
                mount(),
            ),
            (&["stdbuf", "-o", "L", "--error", "0", "mount"], mount()),
            (
                &[
                    "time", "-p", "-f", "%e", "--append", "--output", "t", "mount",
                ],
                mount(),
            ),
            (
                &[
                    "xargs",
                    "-0",
                    "-n",
                    "1",
                    "-i{}",
                    "--no-run-if-empty",
                    "--max-procs",
                    "2",
                    "mount",
                ],
                mount(),
            ),
            (&["command", "-p", "mount"], mount()),
            (&["exec", "-c", "-a", "x", "mount"], mount()),
            (&["busybox", "--list"], Unwrapped::Program),
            (
                &[
                    "unshare",
                    "-m",
                    "-S",
                    "0",
                    "--fork",
                    "--propagation",
                    "private",
                    "mount",
                ],
                mount(),
            ),
            (
                &["chroot", "--skip-chdir", "--userspec", "0:0", "/", "mount"],
                mount(),
            ),
            (
                &[
                    "nsenter",
                    "-a",
                    "-t",
                    "1",
                    "-m",
                    "--no-fork",
                    "--setuid",
                    "0",
                    "mount",
                ],
                mount(),
            ),
            (
                &["setpriv", "-d", "--nnp", "--reuid", "0", "mount"],
                mount(),
            ),
            (
                &[
                    "prlimit",
                    "-r",
                    "-v100",
                    "-p",
                    "1",
                    "-n10",
                    "--noheadings",
                    "--output",
                    "x",
                    "mount",
                ],
                mount(),
            ),
            (
                &[
                    "numactl",
                    "-a",
                    "-N",
                    "0",
                    "--localalloc",
                    "--membind",
                    "0",
                    "mount",
                ],
                mount(),
            ),
            (
                &[
                    "strace",
                    "-f",
                    "-e",
                    "x",
                    "--summary-only",
                    "--output",
                    "o",
                    "mount",
                ],
                mount(),
            ),
            (
                &[
                    "ltrace",
                    "-f",
                    "-o",
                    "x",
                    "--demangle",
                    "--output",
                    "o",
                    "mount",
                ],
                mount(),
            ),
            (
                &[
                    "fakeroot",
                    "-u",
                    "-s",
                    "x",
                    "--unknown-is-real",
                    "--faked",
                    "f",
                    "mount",
                ],
                mount(),
            ),
            (&["unbuffer", "-p", "mount"], mount()),
            (
                &[
                    "sudo",
                    "-E",
                    "-u",
                    "root",
                    "--non-interactive",
                    "--chdir",
                    "/",
                    "mount",
                ],
                mount(),
            ),
            (&["doas", "-n", "-u", "root", "mount"], mount()),
            (
                &["pkexec", "--keep-cwd", "--user", "root", "mount"],
                mount(),
            ),
            (
                &[
                    "run0",
                    "-u",
                    "root",
                    "--no-ask-password",
                    "--setenv",
                    "A=1",
                    "mount",
                ],
                mount(),
            ),
        ];
        for (argv, expected) in cases {
            assert_eq!(&inner(argv), expected, "{argv:?}");
        }
    }

    #[test]
    fn every_launcher_in_the_table_is_listed_and_looked_through() {
        let mut listed: Vec<&str> = LAUNCHERS.to_vec();
        let mut table: Vec<&str> = TABLE.iter().map(|launcher| launcher.name).collect();
        listed.sort_unstable();
        table.sort_unstable();
        assert_eq!(listed, table);
        for launcher in TABLE {
            let mut args: Vec<String> = vec!["x".to_owned(); launcher.operands];
            args.push("ls".to_owned());
            assert_eq!(
                unwrap(launcher.name, &args, &vars),
                command(&["ls"]),
                "{}",
                launcher.name
            );
            let mut dashed = vec!["--".to_owned()];
            dashed.extend(args);
            assert_eq!(
                unwrap(launcher.name, &dashed, &vars),
                command(&["ls"]),
                "{} --",
                launcher.name
            );
        }
    }
}
