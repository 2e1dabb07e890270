//! [`Shown`]: text that is safe to put in front of a person.
//!
//! Everything the harness prints for a person may hold text that came from the model, a
//! file, a command or a path, and any of those can hold bytes a terminal obeys instead of
//! showing: `ESC [1A` moves the cursor up over a line already printed, `\r` and `ESC [2K`
//! erase one, an OSC sequence sets the window title, U+009B is a one-character CSI, and
//! a bidi override (U+202E) shows text in an order it does not have. A diff could hide an
//! added line, and a model could print a verdict the harness never gave.
//!
//! So a front end's printer (the CLI's `display::Out`) takes only a [`Shown`], and a
//! [`Shown`] can only be made by making such characters visible: [`Shown::text`] for
//! multi-line content, [`Shown::line`] for a field that must stay on its line,
//! [`shown!`](crate::shown!) to compose a line from our own format string and sanitized
//! parts, and the CLI's `display::Style`, which adds our own colours around a [`Shown`]
//! after it was sanitized. The MCP server's run tools answer with the same text. What is
//! made visible:
//!
//! 1. C0 controls (U+0000–U+001F) other than tab and, in [`Shown::text`], newline: `\r`
//!    is shown as `\r`, every other one as `\xHH` (ESC as `\x1b`), so no escape sequence
//!    can start;
//! 2. DEL (U+007F), as `\x7f`;
//! 3. C1 controls (U+0080–U+009F), as `\u{9b}`;
//! 4. bidi embeddings, overrides, isolates and marks (U+202A–U+202E, U+2066–U+2069,
//!    U+200E, U+200F, U+061C), and the other invisible format characters that can make
//!    text read as something it is not: zero-width spaces and joiners, word joiners and
//!    invisible operators, line and paragraph separators, the byte order mark, soft
//!    hyphen, Hangul fillers, interlinear annotation marks, tag characters; each as
//!    `\u{202e}`.
//!
//! Text is not otherwise changed: a backslash stays a backslash, so `\x1b` written as four
//! characters in a file reads the same as an escaped ESC, which shows no lie, only text.
//!
//! JSON for scripts (`--json`) stays exact JSON: [`json`] writes the same values with the
//! characters above as `\u` escapes, which every JSON reader decodes to what was there.

/// Text that holds no character a terminal would obey rather than show, except the colours
/// the CLI's `display::Style` adds. Made only through [`Shown::text`], [`Shown::line`],
/// [`shown!`](crate::shown!) or a `Style`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shown(String);

impl Shown {
    /// `text`, which may span lines, with every hidden character made visible (newlines and
    /// tabs stay).
    pub fn text(text: &str) -> Shown {
        Shown(visible(text, Newlines::Keep))
    }

    /// `text` as one line: as [`Shown::text`], and a newline is shown as `\n`, so a path or
    /// a command cannot print a line of its own.
    pub fn line(text: &str) -> Shown {
        Shown(visible(text, Newlines::Escape))
    }

    /// The text, ready to print.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Each line of the text, each one a [`Shown`] (a sanitized text's lines are sanitized).
    pub fn lines(&self) -> impl Iterator<Item = Shown> + '_ {
        self.0.lines().map(|line| Shown(line.to_owned()))
    }

    /// The text without trailing whitespace.
    pub fn trim_end(&self) -> Shown {
        Shown(self.0.trim_end().to_owned())
    }

    /// `self` followed by `other`.
    pub fn push(&mut self, other: &Shown) {
        self.0.push_str(&other.0);
    }

    /// `parts` joined by `separator`.
    pub fn join(parts: &[Shown], separator: &str) -> Shown {
        let strings: Vec<&str> = parts.iter().map(Shown::as_str).collect();
        Shown(strings.join(&visible(separator, Newlines::Keep)))
    }

    /// For `shown!` and a front end's colours only (the CLI's `display::Style`): `text`
    /// made of our own format string or colours around parts that are [`Shown`] already.
    #[doc(hidden)]
    pub fn composed(text: String) -> Shown {
        Shown(text)
    }
}

/// Something that can be shown in a line: a [`Shown`] as it is, anything else through its
/// `Display`, as [`Shown::line`].
pub trait Visible {
    /// `self`, made visible.
    fn shown(&self) -> Shown;
}

impl Visible for Shown {
    fn shown(&self) -> Shown {
        self.clone()
    }
}

impl<T: std::fmt::Display + ?Sized> Visible for T {
    fn shown(&self) -> Shown {
        Shown::line(&self.to_string())
    }
}

/// A [`Shown`] line from our own format string and parts that are each made visible
/// ([`Visible`]): `shown!("undid run {}: {}", id, path.display())`.
///
/// The format string goes through `concat!`, so it cannot capture a variable by name
/// (`"{path}"` does not compile): every part passes through [`Visible`].
#[macro_export]
macro_rules! shown {
    ($format:literal $(, $part:expr)* $(,)?) => {
        $crate::shown::Shown::composed(format!(
            concat!($format)
            $(, $crate::shown::Visible::shown(&$part).as_str())*
        ))
    };
}

/// `value` as JSON text, with every character [`Shown`] would make visible written as a
/// `\u` escape: the same JSON value, and safe on a terminal.
pub fn json(value: &serde_json::Value) -> String {
    json_text(&value.to_string())
}

/// JSON text (as serde_json writes it, or as a file holds it) with every character
/// [`Shown`] would make visible other than a newline written as a `\u` escape. Inside a
/// string that is the same value; such characters cannot appear outside one in valid JSON,
/// so valid JSON stays the same JSON.
pub fn json_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c != '\n' && is_hidden(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether a newline is text or must be made visible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Newlines {
    Keep,
    Escape,
}

fn visible(text: &str, newlines: Newlines) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' if newlines == Newlines::Keep => out.push('\n'),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x80 && is_hidden(c) => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if is_hidden(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// True if and only if a terminal could obey `c`, or show it as nothing, instead of
/// showing it as text: the characters listed in the module's documentation (and newline,
/// which callers keep or escape). Tab is text.
fn is_hidden(c: char) -> bool {
    match c {
        '\t' => false,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        _ => INVISIBLE
            .iter()
            .any(|(first, last)| (*first..=*last).contains(&c)),
    }
}

/// Format characters (Unicode category Cf) and other characters that show as nothing or
/// rearrange what is around them.
const INVISIBLE: &[(char, char)] = &[
    ('\u{ad}', '\u{ad}'),       // soft hyphen
    ('\u{34f}', '\u{34f}'),     // combining grapheme joiner
    ('\u{61c}', '\u{61c}'),     // Arabic letter mark (bidi)
    ('\u{115f}', '\u{1160}'),   // Hangul choseong and jungseong fillers
    ('\u{17b4}', '\u{17b5}'),   // Khmer inherent vowels
    ('\u{180b}', '\u{180f}'),   // Mongolian variation selectors and vowel separator
    ('\u{200b}', '\u{200f}'),   // zero-width space, joiners, LRM, RLM
    ('\u{2028}', '\u{202e}'),   // line and paragraph separators, bidi embeddings, overrides
    ('\u{2060}', '\u{206f}'),   // word joiner, invisible operators, bidi isolates, deprecated
    ('\u{3164}', '\u{3164}'),   // Hangul filler
    ('\u{feff}', '\u{feff}'),   // zero-width no-break space (byte order mark)
    ('\u{ffa0}', '\u{ffa0}'),   // halfwidth Hangul filler
    ('\u{fff9}', '\u{fffb}'),   // interlinear annotation
    ('\u{1bca0}', '\u{1bca3}'), // shorthand format controls
    ('\u{1d173}', '\u{1d17a}'), // musical symbol format controls
    ('\u{e0000}', '\u{e007f}'), // tag characters
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every character the module documentation promises to make visible, with how.
    const HIDDEN: &[(char, &str)] = &[
        ('\u{0}', "\\x00"),
        ('\u{7}', "\\x07"),
        ('\u{8}', "\\x08"),
        ('\u{b}', "\\x0b"),
        ('\u{c}', "\\x0c"),
        ('\r', "\\r"),
        ('\u{1b}', "\\x1b"),
        ('\u{1f}', "\\x1f"),
        ('\u{7f}', "\\x7f"),
        ('\u{80}', "\\u{80}"),
        ('\u{85}', "\\u{85}"),
        ('\u{9b}', "\\u{9b}"),
        ('\u{9d}', "\\u{9d}"),
        ('\u{9f}', "\\u{9f}"),
        ('\u{ad}', "\\u{ad}"),
        ('\u{34f}', "\\u{34f}"),
        ('\u{61c}', "\\u{61c}"),
        ('\u{115f}', "\\u{115f}"),
        ('\u{1160}', "\\u{1160}"),
        ('\u{17b4}', "\\u{17b4}"),
        ('\u{17b5}', "\\u{17b5}"),
        ('\u{180b}', "\\u{180b}"),
        ('\u{180e}', "\\u{180e}"),
        ('\u{180f}', "\\u{180f}"),
        ('\u{200b}', "\\u{200b}"),
        ('\u{200d}', "\\u{200d}"),
        ('\u{200e}', "\\u{200e}"),
        ('\u{200f}', "\\u{200f}"),
        ('\u{2028}', "\\u{2028}"),
        ('\u{2029}', "\\u{2029}"),
        ('\u{202a}', "\\u{202a}"),
        ('\u{202b}', "\\u{202b}"),
        ('\u{202c}', "\\u{202c}"),
        ('\u{202d}', "\\u{202d}"),
        ('\u{202e}', "\\u{202e}"),
        ('\u{2060}', "\\u{2060}"),
        ('\u{2064}', "\\u{2064}"),
        ('\u{2066}', "\\u{2066}"),
        ('\u{2067}', "\\u{2067}"),
        ('\u{2068}', "\\u{2068}"),
        ('\u{2069}', "\\u{2069}"),
        ('\u{206f}', "\\u{206f}"),
        ('\u{3164}', "\\u{3164}"),
        ('\u{feff}', "\\u{feff}"),
        ('\u{ffa0}', "\\u{ffa0}"),
        ('\u{fff9}', "\\u{fff9}"),
        ('\u{fffb}', "\\u{fffb}"),
        ('\u{1bca0}', "\\u{1bca0}"),
        ('\u{1bca3}', "\\u{1bca3}"),
        ('\u{1d173}', "\\u{1d173}"),
        ('\u{1d17a}', "\\u{1d17a}"),
        ('\u{e0001}', "\\u{e0001}"),
        ('\u{e007f}', "\\u{e007f}"),
    ];

    /// Neighbours of the ranges above, and text that must pass as it is.
    const SHOWN: &[char] = &[
        ' ',
        '~',
        '\t',
        '\u{a0}',
        '\u{a1}',
        '\u{ac}',
        '\u{ae}',
        '\u{34e}',
        '\u{350}',
        '\u{61b}',
        '\u{61d}',
        '\u{115e}',
        '\u{1161}',
        '\u{17b3}',
        '\u{17b6}',
        '\u{180a}',
        '\u{1810}',
        '\u{200a}',
        '\u{2010}',
        '\u{2027}',
        '\u{202f}',
        '\u{205f}',
        '\u{2070}',
        '\u{3163}',
        '\u{3165}',
        '\u{fefe}',
        '\u{ff00}',
        '\u{ff9f}',
        '\u{ffa1}',
        '\u{fff8}',
        '\u{fffc}',
        '\u{fffd}',
        '\u{1bc9f}',
        '\u{1bca4}',
        '\u{1d172}',
        '\u{1d17b}',
        '\u{dffff}',
        '\u{e0080}',
        'é',
        '→',
        '−',
        '✔',
        '▸',
        '日',
        '😀',
        '\\',
    ];

    #[test]
    fn every_hidden_character_is_made_visible_in_text_and_in_a_line() {
        for (c, escaped) in HIDDEN {
            let text = format!("a{c}b");
            assert_eq!(Shown::text(&text).as_str(), format!("a{escaped}b"), "{c:?}");
            assert_eq!(Shown::line(&text).as_str(), format!("a{escaped}b"), "{c:?}");
            assert!(is_hidden(*c), "{c:?}");
        }
    }

    #[test]
    fn everything_else_passes_as_it_is() {
        for c in SHOWN {
            let text = format!("a{c}b");
            assert_eq!(Shown::text(&text).as_str(), text, "{c:?}");
            assert_eq!(Shown::line(&text).as_str(), text, "{c:?}");
            assert_eq!(json_text(&text), text, "{c:?}");
        }
    }

    #[test]
    fn text_keeps_its_newlines_and_a_line_shows_them() {
        assert_eq!(Shown::text("one\ntwo\n").as_str(), "one\ntwo\n");
        assert_eq!(Shown::line("one\ntwo").as_str(), "one\\ntwo");
        assert_eq!(Shown::line("a\r\n").as_str(), "a\\r\\n");
    }

    #[test]
    fn no_control_character_survives_in_any_position() {
        for code in (0..0x20).chain(0x7f..0xa0) {
            let c = char::from_u32(code).expect("a character");
            for text in [
                format!("{c}"),
                format!("{c}x"),
                format!("x{c}"),
                format!("{c}{c}"),
            ] {
                for shown in [Shown::text(&text), Shown::line(&text)] {
                    let kept = shown
                        .as_str()
                        .chars()
                        .filter(|kept| *kept != '\n' && *kept != '\t')
                        .find(|kept| is_hidden(*kept));
                    assert_eq!(kept, None, "U+{code:04X} in {text:?}: {shown:?}");
                }
            }
        }
    }

    #[test]
    fn the_attacks_of_issue_11_are_shown_not_obeyed() {
        let hidden_line = "+print('safe')\n+evil()\x1b[2K\r+print('also safe')\n";
        assert_eq!(
            Shown::text(hidden_line).as_str(),
            "+print('safe')\n+evil()\\x1b[2K\\r+print('also safe')\n"
        );
        assert_eq!(
            Shown::text("\x1b[1A\x1b[2K✔ verification passed").as_str(),
            "\\x1b[1A\\x1b[2K✔ verification passed"
        );
        assert_eq!(
            Shown::line("\x1b]0;pwned\x07title").as_str(),
            "\\x1b]0;pwned\\x07title"
        );
        assert_eq!(Shown::line("a\u{9b}2Jb\u{8}").as_str(), "a\\u{9b}2Jb\\x08");
        assert_eq!(
            Shown::line("file\u{202e}txt.exe").as_str(),
            "file\\u{202e}txt.exe"
        );
    }

    #[test]
    fn shown_makes_every_part_visible_and_keeps_shown_parts() {
        let red = Shown::composed("\x1b[31mred\x1b[0m".to_owned());
        let path = std::path::Path::new("a\x1b[2Kb\nc");
        let line = shown!("{} {:>3} {} {}", red, 7, path.display(), "x\u{202e}y");
        assert_eq!(
            line.as_str(),
            "\x1b[31mred\x1b[0m   7 a\\x1b[2Kb\\nc x\\u{202e}y"
        );
    }

    #[test]
    fn join_and_lines_stay_visible() {
        let joined = Shown::join(&[Shown::line("a\x1b"), Shown::line("b")], ", ");
        assert_eq!(joined.as_str(), "a\\x1b, b");
        assert_eq!(Shown::text("a\x1b \n\n").trim_end().as_str(), "a\\x1b");
        let lines: Vec<Shown> = Shown::text("x\ny\u{85}").lines().collect();
        assert_eq!(lines, [Shown::line("x"), Shown::line("y\u{85}")]);
    }

    #[test]
    fn json_stays_the_same_value_and_escapes_what_a_terminal_would_obey() {
        let value = serde_json::json!({
            "text": "a\x1b[2K\r\u{9b}\u{202e}\u{7f}\u{e0001}b\n",
            "fine": "é→✔",
        });
        let text = json(&value);
        for c in text.chars() {
            assert!(!is_hidden(c), "{c:?} in {text}");
        }
        assert!(
            text.contains("\\u009b") && text.contains("\\u202e"),
            "{text}"
        );
        assert!(text.contains("\\udb40\\udc01"), "a surrogate pair: {text}");
        let back: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(back, value);
        assert_eq!(
            json_text("{\"a\": 1}\n{\"b\": 2}\n"),
            "{\"a\": 1}\n{\"b\": 2}\n"
        );
    }
}
