//! Which Python modules a new module of the same name would shadow (the standard library's,
//! the test runner's, an installed pytest plugin), and which files Python runs its own code
//! from: what the file tools refuse to write by its name alone ([`runner_file_by_name`]) and
//! what the verification's judgement looks for ([`VerificationInputs`](crate::VerificationInputs)).

use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

/// Why a file tool writing `path` (relative to the root) would change what the runner
/// loads its own code from, told by the name alone: a startup file of Python's, or a new
/// module at the top of the workspace named after one the verification loads from
/// elsewhere. `new` is whether the file does not exist yet. The early, friendlier half of
/// the judgement ([`VerificationInputs::judge`](crate::VerificationInputs::judge) is the root, since commands write files
/// too).
pub(crate) fn runner_file_by_name(path: &str, new: bool) -> Option<String> {
    let file = path.rsplit('/').next().unwrap_or(path);
    if matches!(file, "sitecustomize.py" | "usercustomize.py") || file.ends_with(".pth") {
        return Some(format!("{path} is a file Python runs at startup"));
    }
    if !new {
        return None;
    }
    let module = match path.split_once('/') {
        // `X/__init__.py` at the top.
        Some((package, rest)) if python_module_stem(rest) == Some("__init__") => package,
        Some(_) => return None,
        None => python_module_stem(path)?,
    };
    let whose = python_modules().whose(module)?;
    Some(format!("{path} would shadow {whose} {module}"))
}

/// The module name a Python file provides: `calc` for `calc.py`, `calc.pyc`, `calc.so` or
/// `calc.cpython-311-x86_64-linux-gnu.so`. `None` for any other file.
pub(crate) fn python_module_stem(file: &str) -> Option<&str> {
    const EXTENSIONS: [&str; 5] = [".py", ".pyc", ".pyw", ".so", ".pyd"];
    let extension = EXTENSIONS.iter().find(|ext| file.ends_with(*ext))?;
    let stem = &file[..file.len() - extension.len()];
    let stem = stem.split('.').next().unwrap_or(stem);
    (!stem.is_empty()).then_some(stem)
}

/// The runner's own Python modules, which are not in the standard library.
const PYTHON_RUNNER_MODULES: &[&str] = &[
    "pytest",
    "_pytest",
    "pluggy",
    "py",
    "iniconfig",
    "nose",
    "nose2",
    "sitecustomize",
    "usercustomize",
];

/// The standard library's top-level modules of Python 3.11 (`sys.stdlib_module_names`), for
/// when no `python3` answers.
const PYTHON_STDLIB_FALLBACK: &str = include_str!("python_stdlib.txt");

/// The Python modules a new module of the same name would shadow.
pub(crate) struct PythonModules {
    /// The standard library's (and the built-in modules').
    stdlib: BTreeSet<String>,
    /// pytest's plugins installed for the `python3` on `PATH`.
    installed: BTreeSet<String>,
}

impl PythonModules {
    /// Whose module `name` is, or `None` when nothing loads a module of that name.
    pub(crate) fn whose(&self, name: &str) -> Option<&'static str> {
        if PYTHON_RUNNER_MODULES.contains(&name) {
            Some("the test runner's")
        } else if self.stdlib.contains(name) {
            Some("the standard library's")
        } else if self.installed.contains(name) {
            Some("the installed pytest plugin")
        } else {
            None
        }
    }
}

/// The modules, asked of the `python3` on `PATH` once, in isolated mode (`-I`: neither the
/// working directory nor `PYTHON*` variables count) from `/`, so nothing in a workspace
/// answers; with 3.11's standard library when it does not answer within 10 seconds.
pub(crate) fn python_modules() -> &'static PythonModules {
    static MODULES: LazyLock<PythonModules> = LazyLock::new(|| {
        let mut modules = PythonModules {
            stdlib: fallback_stdlib(),
            installed: BTreeSet::new(),
        };
        if let Some(answer) = ask_python() {
            modules.add_answer(&answer);
        }
        modules
    });
    &MODULES
}

/// [`PYTHON_STDLIB_FALLBACK`], one name a line.
fn fallback_stdlib() -> BTreeSet<String> {
    PYTHON_STDLIB_FALLBACK
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(str::to_owned)
        .collect()
}

impl PythonModules {
    /// Adds the modules of [`ask_python`]'s answer.
    fn add_answer(&mut self, answer: &str) {
        for line in answer.lines() {
            match line.split_once(' ') {
                Some(("s", name)) => {
                    self.stdlib.insert(name.to_owned());
                }
                Some(("i", name)) => {
                    self.installed.insert(name.to_owned());
                }
                _ => {}
            }
        }
    }
}

/// `s NAME` for each standard library and built-in module, `i NAME` for each installed
/// pytest plugin, from `python3`; `None` when it cannot be run or takes too long.
fn ask_python() -> Option<String> {
    // pytest's plugins are the modules its `pytest11` entry points name; the rest of
    // site-packages is the code's dependencies, not the runner (a new `decorator.py` is more
    // likely a module of the task's than a stand-in for the package of that name).
    const SCRIPT: &str = "import sys\n\
        for n in sorted(set(getattr(sys, 'stdlib_module_names', ())) | set(sys.builtin_module_names)): print('s', n)\n\
        import importlib.metadata as m\n\
        try:\n    eps = m.entry_points(group='pytest11')\n\
        except TypeError:\n    eps = m.entry_points().get('pytest11', [])\n\
        for e in eps: print('i', e.value.split(':')[0].split('.')[0])\n";
    run_for(
        Command::new("python3").args(["-I", "-c", SCRIPT]),
        Duration::from_secs(10),
    )
}

/// The output of `command`, run from `/` with nothing on stdin, when it exits 0 within
/// `patience`; `None` otherwise, the command killed.
fn run_for(command: &mut Command, patience: Duration) -> Option<String> {
    let mut child = command
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    // Read on a thread while this one watches the clock: a full pipe must not stall the
    // child, nor a stalled child this run.
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut text).map(|_| text)
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < patience => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                // Ours, started above: ended and reaped so no process is left behind.
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    let text = reader.join().ok()?.ok()?;
    status
        .success()
        .then(|| String::from_utf8_lossy(&text).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_python_on_path_is_asked_and_the_fallback_holds_the_standard_library() {
        let modules = python_modules();
        for name in ["unittest", "json", "os", "sys", "collections"] {
            assert_eq!(
                modules.whose(name),
                Some("the standard library's"),
                "{name}"
            );
        }
        assert_eq!(modules.whose("no_such_module_anywhere"), None);
        // The python3 the tests run with answers; nothing installed beyond the runner's
        // plugins counts.
        let answer = ask_python().expect("python3 answers");
        assert!(answer.lines().any(|line| line == "s unittest"), "{answer}");
        assert!(
            answer
                .lines()
                .all(|line| line.starts_with("s ") || line.starts_with("i "))
        );
        assert_eq!(modules.whose("requests"), None);
        // Without an answer, the fallback alone.
        let fallback = fallback_stdlib();
        assert!(fallback.contains("unittest") && fallback.contains("json"));
        assert!(!fallback.contains(""));
        let mut answered = PythonModules {
            stdlib: BTreeSet::new(),
            installed: BTreeSet::new(),
        };
        answered.add_answer("s newstd\ni pytest_fake\nx other\nnothing");
        assert_eq!(answered.whose("newstd"), Some("the standard library's"));
        assert_eq!(
            answered.whose("pytest_fake"),
            Some("the installed pytest plugin")
        );
        assert_eq!(answered.whose("other"), None);
    }

    #[test]
    fn a_python_that_does_not_answer_in_time_is_not_waited_for() {
        let started = Instant::now();
        let answer = run_for(
            Command::new("sh").args(["-c", "sleep 5"]),
            Duration::from_millis(200),
        );
        assert_eq!(answer, None);
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
        let answer = run_for(
            Command::new("sh").args(["-c", "echo s x"]),
            Duration::from_secs(10),
        );
        assert_eq!(answer.as_deref(), Some("s x\n"));
        assert_eq!(
            run_for(
                Command::new("false").args::<[&str; 0], &str>([]),
                Duration::from_secs(10)
            ),
            None
        );
        assert_eq!(
            python_module_stem("a.cpython-311-x86_64-linux-gnu.so"),
            Some("a")
        );
        assert_eq!(python_module_stem(".py"), None);
        assert_eq!(python_module_stem("a.txt"), None);
    }
}
