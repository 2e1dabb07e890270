//! Import circles between the top-level modules of a crate: the edges each module's paths
//! make, and the sets of modules that reach each other.

use std::collections::{BTreeMap, BTreeSet};

use super::BUILDER_PAIRS;

/// The module graph of one crate: which top-level module uses which.
#[derive(Debug, Default)]
pub(super) struct Graph {
    /// Each top-level module with the modules it uses (itself left out).
    pub(super) edges: BTreeMap<String, BTreeSet<String>>,
}

/// Modules that reach each other, and the edges between them.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Circle {
    /// The modules, in order.
    pub(super) modules: Vec<String>,
    /// Every edge between two of them.
    pub(super) edges: Vec<(String, String)>,
}

impl Circle {
    /// `a ↔ b` for two modules, `a → b, b → c, c → a` for more.
    pub(super) fn render(&self) -> String {
        if let [a, b] = self.modules.as_slice() {
            return format!("{a} <-> {b}");
        }
        let edges: Vec<String> = self
            .edges
            .iter()
            .map(|(from, to)| format!("{from} -> {to}"))
            .collect();
        format!("{} ({})", self.modules.join(", "), edges.join(", "))
    }
}

impl Graph {
    /// The graph of a crate: `root` is its root's code, `files` each module path with its
    /// code (comments and strings blanked, production part only). A name the root
    /// re-exports from a module (`pub use list::Entry`) leads to that module.
    pub(super) fn of(root: &str, files: &[(Vec<String>, String)]) -> Graph {
        let modules: BTreeSet<String> = files.iter().map(|(path, _)| path[0].clone()).collect();
        let mut reexports: BTreeMap<String, String> = BTreeMap::new();
        for used in paths(root, |tokens, i| (tokens[i] == "use").then_some(i + 1)) {
            let mut segments = used
                .path
                .iter()
                .skip_while(|s| *s == "self" || *s == "crate");
            if let Some(module) = segments.next()
                && modules.contains(module)
                && segments.next().is_some()
                && used.binding != "*"
            {
                reexports.insert(used.binding.clone(), module.clone());
            }
        }
        let mut graph = Graph::default();
        for (path, code) in files {
            for used in paths(code, starts_at_crate_or_super) {
                let target = resolve(path, &used.path)
                    .filter(|target| modules.contains(target))
                    .or_else(|| reexported(&used.path, &reexports));
                if let Some(target) = target.filter(|target| *target != path[0]) {
                    graph
                        .edges
                        .entry(path[0].clone())
                        .or_default()
                        .insert(target);
                }
            }
        }
        graph
    }

    /// The sets of more than one module that reach each other, each with its edges.
    pub(super) fn circles(&self) -> Vec<Circle> {
        let reach: BTreeMap<&String, BTreeSet<&String>> = self
            .edges
            .keys()
            .map(|from| (from, self.reachable(from)))
            .collect();
        let mut circles: Vec<Circle> = Vec::new();
        for (from, reached) in &reach {
            let modules: Vec<String> = reached
                .iter()
                .filter(|to| reach.get(*to).is_some_and(|back| back.contains(from)))
                .map(|module| (*module).clone())
                .collect();
            let known = circles.iter().any(|circle| circle.modules.contains(*from));
            if modules.len() < 2 || known {
                continue;
            }
            let edges = modules
                .iter()
                .flat_map(|from| self.edges[from].iter().map(move |to| (from, to)))
                .filter(|(_, to)| modules.contains(to))
                .map(|(from, to)| (from.clone(), to.clone()))
                .collect();
            circles.push(Circle { modules, edges });
        }
        circles
    }

    /// Every module reachable from `from` through one edge or more.
    fn reachable(&self, from: &String) -> BTreeSet<&String> {
        let mut reached = BTreeSet::new();
        let mut pending: Vec<&String> = self.edges.get(from).into_iter().flatten().collect();
        while let Some(module) = pending.pop() {
            if reached.insert(module) {
                pending.extend(self.edges.get(module).into_iter().flatten());
            }
        }
        reached
    }
}

/// The module `crate::Name` leads to when the crate root re-exports `Name` from it.
pub(super) fn reexported(used: &[String], reexports: &BTreeMap<String, String>) -> Option<String> {
    match used {
        [first, name, ..] if first == "crate" => reexports.get(name).cloned(),
        _ => None,
    }
}

/// True if and only if `circle` of the crate `krate` is a builder and what it builds.
pub(super) fn is_builder_pair(krate: &str, circle: &Circle) -> bool {
    BUILDER_PAIRS.iter().any(|(pair_crate, builder, built)| {
        let mut pair = [*builder, *built];
        pair.sort_unstable();
        *pair_crate == krate && circle.modules == pair
    })
}

/// The top-level module a path used in the module at `from` leads to: `crate::b::…` to
/// `b`, `super::…` from `a::x` to what follows in `a` (from `a` itself, to the crate's
/// module named next); `None` for any other path.
pub(super) fn resolve(from: &[String], used: &[String]) -> Option<String> {
    match used.first()?.as_str() {
        "crate" => used.get(1).cloned(),
        "super" => {
            let supers = used
                .iter()
                .take_while(|segment| *segment == "super")
                .count();
            let base = from.len().checked_sub(supers)?;
            from[..base].iter().chain(&used[supers..]).next().cloned()
        }
        _ => None,
    }
}

/// A path a `use` brings in, and the name it binds.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Used {
    /// Its segments, `crate` or `self` included.
    pub(super) path: Vec<String>,
    /// The name it is known by: its last segment, or what follows `as`.
    pub(super) binding: String,
}

/// Every path in `code` that starts where `start` says (given the tokens and an index, the
/// index of the path's first token, or `None`), groups expanded: `use crate::{a, b::{c,
/// d}}` is `crate::a`, `crate::b::c` and `crate::b::d`.
pub(super) fn paths(code: &str, start: impl Fn(&[String], usize) -> Option<usize>) -> Vec<Used> {
    let tokens = tokens(code);
    let mut found = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        match start(&tokens, i) {
            Some(first) => {
                let (paths, end) = path_tree(&tokens, first, &[]);
                found.extend(paths);
                i = end.max(i + 1);
            }
            None => i += 1,
        }
    }
    found
}

/// Where a path starting at `crate` or `super` begins (not `$crate`, nor a `super` of
/// `super::super`).
pub(super) fn starts_at_crate_or_super(tokens: &[String], i: usize) -> Option<usize> {
    let begins = (tokens[i] == "crate" || tokens[i] == "super")
        && (i == 0 || (tokens[i - 1] != "::" && tokens[i - 1] != "$"));
    begins.then_some(i)
}

/// The paths of the path tree starting at token `i` (segments joined by `::`, `{…}`
/// groups, `as` renames, `*`), under `prefix`; and the token after it.
pub(super) fn path_tree(tokens: &[String], mut i: usize, prefix: &[String]) -> (Vec<Used>, usize) {
    let mut path = prefix.to_vec();
    loop {
        match tokens.get(i).map(String::as_str) {
            Some("{") => {
                let mut found = Vec::new();
                i += 1;
                while let Some(token) = tokens.get(i) {
                    match token.as_str() {
                        "}" => return (found, i + 1),
                        "," => i += 1,
                        _ => {
                            let (paths, end) = path_tree(tokens, i, &path);
                            found.extend(paths);
                            i = end.max(i + 1);
                        }
                    }
                }
                return (found, i);
            }
            Some(token) if is_identifier(token) || token == "*" => {
                path.push(token.to_owned());
                i += 1;
                if tokens.get(i).map(String::as_str) == Some("::") {
                    i += 1;
                    continue;
                }
                let mut binding = token.to_owned();
                if tokens.get(i).map(String::as_str) == Some("as")
                    && let Some(alias) = tokens.get(i + 1)
                {
                    binding = alias.clone();
                    i += 2;
                }
                if binding == "self" {
                    path.pop();
                    binding = path.last().cloned().unwrap_or_default();
                }
                return (vec![Used { path, binding }], i);
            }
            _ => return (Vec::new(), i),
        }
    }
}

/// True if and only if `token` is an identifier (a keyword such as `crate` included).
pub(super) fn is_identifier(token: &str) -> bool {
    token
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// The tokens of `code` this task reads: identifiers, `::`, and every other character
/// that is not whitespace, one by one.
pub(super) fn tokens(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphabetic() || c == '_' {
            let word: String = chars[i..]
                .iter()
                .take_while(|c| c.is_alphanumeric() || **c == '_')
                .collect();
            i += word.chars().count();
            tokens.push(word);
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            tokens.push("::".to_owned());
            i += 2;
        } else {
            if !c.is_whitespace() {
                tokens.push(c.to_string());
            }
            i += 1;
        }
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structure::lexer::blank_comments_and_strings;

    fn module(path: &str, code: &str) -> (Vec<String>, String) {
        let path = path.split("::").map(str::to_owned).collect();
        (path, blank_comments_and_strings(code))
    }

    #[test]
    fn a_two_module_cycle_is_a_circle_and_a_one_way_use_is_not() {
        let files = [
            module("error", "use crate::preflight::Unavailable;\n"),
            module(
                "preflight",
                "use crate::{runner::Runner, tier::{self, Tier}};\n\
                 pub(crate) fn f() -> crate::error::Error { crate::error::Error::Busy }\n",
            ),
            module("runner", "use super::tier::Tier;\npub(super) fn run() {}\n"),
            module(
                "tier",
                "// use crate::error::Error;\nconst NAME: &str = \"crate::runner\";\n",
            ),
            module(
                "tier::names",
                "use super::Tier;\nuse super::super::limits::Limits;\n",
            ),
            module("limits", "use std::fmt;\n"),
        ];
        let graph = Graph::of("", &files);
        let edges = |from: &str| -> Vec<&str> {
            graph
                .edges
                .get(from)
                .into_iter()
                .flatten()
                .map(String::as_str)
                .collect()
        };
        assert_eq!(edges("preflight"), ["error", "runner", "tier"]);
        assert_eq!(edges("runner"), ["tier"]);
        assert_eq!(edges("tier"), ["limits"]);
        let circles = graph.circles();
        assert_eq!(
            circles,
            [Circle {
                modules: vec!["error".into(), "preflight".into()],
                edges: vec![
                    ("error".into(), "preflight".into()),
                    ("preflight".into(), "error".into()),
                ],
            }]
        );
        assert_eq!(circles[0].render(), "error <-> preflight");
    }

    #[test]
    fn a_name_the_root_re_exports_leads_to_its_module() {
        let root = blank_comments_and_strings(
            "mod limits;\nmod list;\npub use limits::{Limits as Caps};\npub use self::list::*;\n",
        );
        let files = [
            module("limits", "use crate::Caps as _;\nuse crate::list::Entry;\n"),
            module("list", "fn f(caps: &crate::Caps) {}\n"),
        ];
        assert!(Graph::of("", &files).circles().is_empty());
        let circles = Graph::of(&root, &files).circles();
        assert_eq!(circles.len(), 1);
        assert_eq!(circles[0].render(), "limits <-> list");
    }

    #[test]
    fn a_builder_pair_is_allowed_and_only_in_its_crate() {
        let files = [
            module("builder", "use crate::toolbox::Toolbox;\n"),
            module("toolbox", "use crate::builder::ToolboxBuilder;\n"),
        ];
        let circles = Graph::of("", &files).circles();
        assert_eq!(circles.len(), 1);
        assert!(is_builder_pair("harness-tools", &circles[0]));
        assert!(!is_builder_pair("harness-agent", &circles[0]));
        let three = [
            module("builder", "use crate::toolbox::Toolbox;\n"),
            module("toolbox", "use crate::list::list;\n"),
            module("list", "use crate::builder::Limits;\n"),
        ];
        let circles = Graph::of("", &three).circles();
        assert!(!is_builder_pair("harness-tools", &circles[0]));
        assert_eq!(
            circles[0].render(),
            "builder, list, toolbox (builder -> toolbox, list -> builder, toolbox -> list)"
        );
    }
}
