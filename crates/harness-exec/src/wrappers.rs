//! Looking through wrapper programs (`env`, `nice`, `timeout`, …) to the
//! command they run, so that `env sudo ls` is judged like `sudo ls`.

use std::collections::VecDeque;

/// How a wrapper program's arguments are laid out before the command it runs.
struct Wrapper {
    /// The program's basename.
    name: &'static str,
    /// Short options that take a value, as `-n 5` or `-n5`.
    short_values: &'static str,
    /// Long options that take a value, when not written `--name=value`.
    long_values: &'static [&'static str],
    /// Options whose value is itself a command line to split into words
    /// (`env -S 'sudo ls'`).
    splits: &'static [&'static str],
    /// Operands before the command (the duration of `timeout`).
    operands: usize,
    /// Whether `NAME=value` assignments may come before the command (`env`).
    assignments: bool,
}

const fn wrapper(name: &'static str) -> Wrapper {
    Wrapper {
        name,
        short_values: "",
        long_values: &[],
        splits: &[],
        operands: 0,
        assignments: false,
    }
}

/// The wrappers looked through: the option letters that take values follow
/// GNU coreutils, findutils, GNU time, sudo, doas and pkexec.
const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        short_values: "uCS",
        long_values: &["unset", "chdir", "split-string"],
        splits: &["S", "split-string"],
        assignments: true,
        ..wrapper("env")
    },
    Wrapper {
        short_values: "n",
        long_values: &["adjustment"],
        ..wrapper("nice")
    },
    wrapper("nohup"),
    Wrapper {
        short_values: "sk",
        long_values: &["signal", "kill-after"],
        operands: 1,
        ..wrapper("timeout")
    },
    Wrapper {
        short_values: "fo",
        long_values: &["format", "output"],
        ..wrapper("time")
    },
    Wrapper {
        short_values: "ioe",
        long_values: &["input", "output", "error"],
        ..wrapper("stdbuf")
    },
    Wrapper {
        short_values: "aEdILnPs",
        long_values: &[
            "arg-file",
            "delimiter",
            "max-args",
            "max-procs",
            "max-chars",
            "process-slot-var",
        ],
        ..wrapper("xargs")
    },
    Wrapper {
        short_values: "CDghpRrTtUu",
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
        ..wrapper("sudo")
    },
    Wrapper {
        short_values: "Cu",
        ..wrapper("doas")
    },
    Wrapper {
        long_values: &["user"],
        ..wrapper("pkexec")
    },
];

/// The command the wrapper `name` runs, given the wrapper's arguments; `None`
/// when `name` is not a wrapper or its arguments name no command.
pub(crate) fn wrapped_command(name: &str, args: &[String]) -> Option<Vec<String>> {
    let wrapper = WRAPPERS.iter().find(|wrapper| wrapper.name == name)?;
    let mut rest: VecDeque<String> = args.iter().cloned().collect();
    // Options end at `--` or at the first operand, as with getopt's `+`.
    while let Some(arg) = rest.pop_front() {
        if arg == "--" {
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (option, value) = match long.split_once('=') {
                Some((option, value)) => (option, Some(value.to_owned())),
                None => (long, None),
            };
            let takes_value = wrapper.long_values.contains(&option);
            let value = value.or_else(|| if takes_value { rest.pop_front() } else { None });
            split_into(wrapper, option, value, &mut rest);
            continue;
        }
        if let Some(cluster) = arg.strip_prefix('-').filter(|cluster| !cluster.is_empty()) {
            // A cluster of short options: `-iu NAME`, `-n5`. The first one
            // that takes a value ends the cluster.
            for (at, letter) in cluster.char_indices() {
                if wrapper.short_values.contains(letter) {
                    let attached = &cluster[at + letter.len_utf8()..];
                    let value = if attached.is_empty() {
                        rest.pop_front()
                    } else {
                        Some(attached.to_owned())
                    };
                    split_into(
                        wrapper,
                        &cluster[at..at + letter.len_utf8()],
                        value,
                        &mut rest,
                    );
                    break;
                }
            }
            continue;
        }
        if arg == "-" || (wrapper.assignments && arg.contains('=')) {
            // `env -` is `env -i`; `NAME=value` sets a variable.
            continue;
        }
        rest.push_front(arg);
        break;
    }
    // The wrapper's own operands (the duration of `timeout`) come first.
    rest.drain(..wrapper.operands.min(rest.len()));
    (!rest.is_empty()).then(|| rest.into())
}

/// Puts the words of `value` back in front of `rest` when `option` splits its
/// value into a command line (`env -S 'sudo ls'`). The split is on whitespace:
/// `env -S` quoting and escapes are not interpreted.
fn split_into(wrapper: &Wrapper, option: &str, value: Option<String>, rest: &mut VecDeque<String>) {
    if !wrapper.splits.contains(&option) {
        return;
    }
    let Some(value) = value else { return };
    for word in value.split_whitespace().rev() {
        rest.push_front(word.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inner(argv: &[&str]) -> Option<Vec<String>> {
        let args: Vec<String> = argv[1..].iter().map(|s| s.to_string()).collect();
        wrapped_command(argv[0], &args)
    }

    macro_rules! unwraps {
        ($($name:ident: [$($arg:literal),*] => $expected:expr;)*) => {$(
            #[test]
            fn $name() {
                let expected: Option<&[&str]> = $expected;
                let expected = expected.map(|e| e.iter().map(|s| s.to_string()).collect::<Vec<_>>());
                assert_eq!(inner(&[$($arg),*]), expected);
            }
        )*};
    }

    unwraps! {
        env_plain: ["env", "sudo", "ls"] => Some(&["sudo", "ls"]);
        env_assignments: ["env", "A=1", "B=2", "sudo", "ls"] => Some(&["sudo", "ls"]);
        env_ignore_environment: ["env", "-i", "sudo"] => Some(&["sudo"]);
        env_dash: ["env", "-", "sudo"] => Some(&["sudo"]);
        env_unset_separate: ["env", "-u", "HOME", "sudo"] => Some(&["sudo"]);
        env_unset_attached: ["env", "-uHOME", "sudo"] => Some(&["sudo"]);
        env_unset_in_cluster: ["env", "-iu", "HOME", "sudo"] => Some(&["sudo"]);
        env_unset_long: ["env", "--unset", "HOME", "sudo"] => Some(&["sudo"]);
        env_unset_long_equals: ["env", "--unset=HOME", "sudo"] => Some(&["sudo"]);
        env_chdir: ["env", "-C", "/tmp", "sudo"] => Some(&["sudo"]);
        env_flag_without_value: ["env", "--ignore-environment", "sudo"] => Some(&["sudo"]);
        env_split_string: ["env", "-S", "sudo ls", "-l"] => Some(&["sudo", "ls", "-l"]);
        env_split_string_attached: ["env", "-Ssudo ls"] => Some(&["sudo", "ls"]);
        env_split_string_long: ["env", "--split-string=-i sudo ls"] => Some(&["sudo", "ls"]);
        env_split_string_long_separate: ["env", "--split-string", "sudo ls"] => Some(&["sudo", "ls"]);
        env_split_string_missing_value: ["env", "-S"] => None;
        env_double_dash: ["env", "--", "sudo"] => Some(&["sudo"]);
        env_alone: ["env"] => None;
        env_only_assignments: ["env", "A=1"] => None;
        nice_plain: ["nice", "sudo"] => Some(&["sudo"]);
        nice_adjustment: ["nice", "-n", "5", "sudo"] => Some(&["sudo"]);
        nice_negative_adjustment: ["nice", "-n", "-5", "sudo"] => Some(&["sudo"]);
        nice_attached: ["nice", "-n10", "sudo"] => Some(&["sudo"]);
        nice_old_style: ["nice", "-10", "sudo"] => Some(&["sudo"]);
        nice_long: ["nice", "--adjustment", "5", "sudo"] => Some(&["sudo"]);
        nohup_plain: ["nohup", "sudo", "ls"] => Some(&["sudo", "ls"]);
        timeout_duration: ["timeout", "5", "sudo"] => Some(&["sudo"]);
        timeout_signal: ["timeout", "-s", "KILL", "5", "sudo"] => Some(&["sudo"]);
        timeout_kill_after: ["timeout", "-k", "1", "--preserve-status", "5s", "sudo"] => Some(&["sudo"]);
        timeout_long_signal: ["timeout", "--signal", "TERM", "5", "sudo"] => Some(&["sudo"]);
        timeout_double_dash: ["timeout", "--", "5", "sudo"] => Some(&["sudo"]);
        timeout_only_duration: ["timeout", "5"] => None;
        timeout_nothing: ["timeout"] => None;
        time_plain: ["time", "sudo"] => Some(&["sudo"]);
        time_format: ["time", "-f", "%e", "-o", "t.txt", "sudo"] => Some(&["sudo"]);
        time_portable: ["time", "-p", "sudo"] => Some(&["sudo"]);
        stdbuf_modes: ["stdbuf", "-o", "L", "-eL", "sudo"] => Some(&["sudo"]);
        stdbuf_long: ["stdbuf", "--output=L", "sudo"] => Some(&["sudo"]);
        stdbuf_long_separate: ["stdbuf", "--output", "L", "sudo"] => Some(&["sudo"]);
        time_long_separate: ["time", "--output", "t.txt", "sudo"] => Some(&["sudo"]);
        xargs_long_separate: ["xargs", "--max-args", "1", "rm"] => Some(&["rm"]);
        sudo_long_separate: ["sudo", "--user", "root", "ls"] => Some(&["ls"]);
        xargs_plain: ["xargs", "rm", "-rf"] => Some(&["rm", "-rf"]);
        xargs_options: ["xargs", "-0", "-n", "1", "-P", "4", "-I", "{}", "rm", "{}"] => Some(&["rm", "{}"]);
        xargs_arg_file: ["xargs", "-a", "list", "--max-args=2", "rm"] => Some(&["rm"]);
        xargs_alone: ["xargs"] => None;
        sudo_user: ["sudo", "-u", "root", "-E", "ls"] => Some(&["ls"]);
        sudo_cluster: ["sudo", "-Eu", "root", "ls"] => Some(&["ls"]);
        doas_user: ["doas", "-u", "root", "ls"] => Some(&["ls"]);
        pkexec_user: ["pkexec", "--user", "root", "ls"] => Some(&["ls"]);
        not_a_wrapper: ["ls", "-l"] => None;
    }

    #[test]
    fn every_wrapper_is_looked_through() {
        for name in [
            "env", "nice", "nohup", "timeout", "time", "stdbuf", "xargs", "sudo", "doas", "pkexec",
        ] {
            let args = ["--".to_owned(), "1".to_owned(), "ls".to_owned()];
            let inner = wrapped_command(name, &args).unwrap_or_default();
            assert_eq!(inner.last().map(String::as_str), Some("ls"), "{name}");
        }
        assert_eq!(
            wrapped_command("sh", &["-c".to_owned(), "ls".to_owned()]),
            None
        );
    }
}
