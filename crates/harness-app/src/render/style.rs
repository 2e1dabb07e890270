//! [`Style`]: our colours, added around text that is [`Shown`] already, and a diff coloured
//! line by line.

use crate::shown;
use crate::shown::Shown;

/// Colors for a terminal, or none. They are added around text that is [`Shown`] already,
/// so ours are the only escape sequences printed.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    color: bool,
}

impl Style {
    /// Colors for a terminal, unless `no_color` (the `NO_COLOR` variable) is set to anything
    /// but the empty string, as <https://no-color.org> asks.
    pub fn choose(terminal: bool, no_color: Option<&std::ffi::OsStr>) -> Style {
        let no_color = no_color.is_some_and(|value| !value.is_empty());
        Style {
            color: terminal && !no_color,
        }
    }

    fn paint(self, code: &str, text: &Shown) -> Shown {
        if self.color {
            Shown::composed(format!("\x1b[{code}m{}\x1b[0m", text.as_str()))
        } else {
            text.clone()
        }
    }

    /// Bold.
    pub fn bold(self, text: &Shown) -> Shown {
        self.paint("1", text)
    }

    /// Dimmed: what is there for reference.
    pub fn dim(self, text: &Shown) -> Shown {
        self.paint("2", text)
    }

    /// Red: a failure.
    pub fn red(self, text: &Shown) -> Shown {
        self.paint("31", text)
    }

    /// Green: a success.
    pub fn green(self, text: &Shown) -> Shown {
        self.paint("32", text)
    }

    /// Yellow: what needs the user's eye.
    pub fn yellow(self, text: &Shown) -> Shown {
        self.paint("33", text)
    }

    /// Cyan: a diff's hunk header.
    pub fn cyan(self, text: &Shown) -> Shown {
        self.paint("36", text)
    }

    /// A unified diff, each line colored by its kind. The diff is sanitized first, so a line
    /// cannot hide another; and a line that is no line of a diff (no ` `, `+`, `-`, `@` or
    /// `\\` in front, no header) can only come from a newline in a path, so it is shown on the
    /// line it belongs to, after a visible `\\n`, and cannot pass for a line of ours.
    pub fn diff(self, diff: &Shown) -> Shown {
        let mut lines: Vec<String> = Vec::new();
        for line in diff.as_str().lines() {
            match lines.last_mut() {
                Some(last) if !is_diff_line(line) => {
                    last.push_str("\\n");
                    last.push_str(line);
                }
                _ => lines.push(line.to_owned()),
            }
        }
        let mut out = Shown::default();
        for text in lines {
            // Each piece was part of the sanitized diff.
            let line = Shown::composed(text);
            let text = line.as_str();
            let painted = if text.starts_with("+++") || text.starts_with("---") {
                self.bold(&line)
            } else if text.starts_with('+') {
                self.green(&line)
            } else if text.starts_with('-') {
                self.red(&line)
            } else if text.starts_with("@@") {
                self.cyan(&line)
            } else if text.starts_with("diff --git") || text.starts_with("index ") {
                self.bold(&line)
            } else {
                line
            };
            out.push(&painted);
            out.push(&shown!("\n"));
        }
        out
    }
}

/// How the header lines of a git diff begin.
const DIFF_HEADERS: &[&str] = &[
    "diff --git ",
    "index ",
    "new file mode ",
    "deleted file mode ",
    "old mode ",
    "new mode ",
    "similarity index ",
    "dissimilarity index ",
    "rename from ",
    "rename to ",
    "copy from ",
    "copy to ",
    "Binary files ",
];

/// True if and only if `line` can be a line of a unified diff: context, an addition, a
/// removal, a hunk or file header, or git's "\\ No newline at end of file".
fn is_diff_line(line: &str) -> bool {
    line.starts_with([' ', '+', '-', '@', '\\'])
        || DIFF_HEADERS.iter().any(|header| line.starts_with(header))
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
            let x = Shown::line("x");
            for painted in [
                style.red(&x),
                style.green(&x),
                style.yellow(&x),
                style.dim(&x),
                style.bold(&x),
                style.cyan(&x),
            ] {
                assert!(painted.as_str().contains('x'), "{painted:?}");
                assert_eq!(painted.as_str() != "x", color, "{painted:?}");
            }
        }
    }

    #[test]
    fn diffs_are_colored_line_by_line_only_with_color() {
        let diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n same";
        let plain = Style { color: false }.diff(&Shown::text(diff));
        assert_eq!(plain.as_str(), format!("{diff}\n"));
        let colored = Style { color: true }.diff(&Shown::text(diff));
        let colored = colored.as_str();
        assert!(colored.contains("\x1b[31m-old\x1b[0m"));
        assert!(colored.contains("\x1b[32m+new\x1b[0m"));
        assert!(
            colored.contains("\x1b[1m+++ b/x\x1b[0m"),
            "headers are not additions"
        );
        assert!(colored.contains("\x1b[36m@@ -1 +1 @@\x1b[0m"));
        let headers = Style { color: true }.diff(&Shown::text("diff --git a/x b/x\nindex 1..2\n"));
        assert_eq!(
            headers.as_str(),
            "\x1b[1mdiff --git a/x b/x\x1b[0m\n\x1b[1mindex 1..2\x1b[0m\n"
        );
        assert!(colored.ends_with(" same\n"));
    }

    #[test]
    fn a_hostile_diff_is_sanitized_before_it_is_colored() {
        let diff = "+ok\n+evil()\x1b[2K\r+fine\n-\x1b[1A\u{9b}2J\u{202e}x\n";
        for color in [false, true] {
            let shown = Style { color }.diff(&Shown::text(diff));
            let ours = ["\x1b[32m", "\x1b[31m", "\x1b[0m"];
            let mut rest = shown.as_str().to_owned();
            for code in ours {
                rest = rest.replace(code, "");
            }
            assert!(
                !rest.contains(['\x1b', '\r', '\u{9b}', '\u{202e}']),
                "{color}: {rest:?}"
            );
            assert!(rest.contains("+evil()\\x1b[2K\\r+fine"), "{rest:?}");
            assert_eq!(
                rest.lines().count(),
                3,
                "no line was added or hidden: {rest:?}"
            );
        }
    }

    #[test]
    fn a_line_a_path_s_newline_made_is_shown_on_its_own_line() {
        let diff = "--- /dev/null\n+++ b/fake\n✔ verification passed\n\n.txt\n@@ -0,0 +1 @@\n+y\n \n\\ No newline at end of file\ndiff --git a/x b/x\nindex 1..2\n";
        let shown = Style { color: false }.diff(&Shown::text(diff));
        assert_eq!(
            shown.as_str(),
            "--- /dev/null\n+++ b/fake\\n✔ verification passed\\n\\n.txt\n@@ -0,0 +1 @@\n+y\n \n\\ No newline at end of file\ndiff --git a/x b/x\nindex 1..2\n"
        );
    }
}
