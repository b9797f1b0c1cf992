//! `cargo xtask structure`: the shape of the published crates' sources, read without building
//! them.
//!
//! - No import circle among the files of a crate's `src/`: no file uses one that uses it back,
//!   directly or through others. A file's `mod.rs` is a file like any other.
//! - No import circle among a crate's top-level modules (a file, or a directory with everything
//!   under it).
//! - No file over [`MAX_LINES`] lines of code (blank lines and comments aside; unit tests count).
//!
//! Every dependency counts, not only `use` lines: `use` groups over several lines, globs
//! (`use super::*`), paths written inline (`crate::envelope::escape_text(..)`,
//! `super::super::tool::Context`), and names taken through a module's `pub use` (`lib.rs`'s, a
//! `mod.rs`'s), resolved to the file that defines them. A `pub use` alone is a table of contents,
//! not a use; a file that re-exports a name and also uses it does use it. Comments, strings and
//! character literals are not code and are skipped.
//!
//! `cargo xtask structure --sizes` also prints every file with its count, largest first;
//! `--edges` prints every dependency between files, with the paths that make it.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::Error;

/// The most lines of code a source file may hold.
pub(crate) const MAX_LINES: usize = 600;

/// The sources checked, from the workspace's root.
const CRATES: [&str; 3] = ["rules/src", "macros/src", "runtime/src"];

/// Runs the check over the workspace's published crates; `args` may hold `--sizes`.
pub(crate) fn run(workspace: &Path, args: &[std::ffi::OsString]) -> Result<(), Error> {
    let sizes = args.iter().any(|a| a == "--sizes");
    let edges = args.iter().any(|a| a == "--edges");
    if let Some(other) = args.iter().find(|a| *a != "--sizes" && *a != "--edges") {
        return Err(format!("structure: unknown argument {other:?} (--sizes, --edges)").into());
    }
    let mut problems = String::new();
    let mut all_sizes = Vec::new();
    for krate in CRATES {
        let src = workspace.join(krate);
        if !src.is_dir() {
            continue;
        }
        let report = check(&src)?;
        for (file, lines) in &report.sizes {
            all_sizes.push((*lines, format!("{krate}/{file}")));
        }
        problems.push_str(&report.render(krate));
        if edges {
            for (from, targets) in &report.files {
                for (to, how) in targets {
                    let how: Vec<&str> = how.iter().map(String::as_str).collect();
                    println!("{krate}/{from} -> {to}: {}", how.join(", "));
                }
            }
        }
    }
    if sizes {
        all_sizes.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        for (lines, file) in &all_sizes {
            println!("{lines:>6}  {file}");
        }
    }
    match problems.is_empty() {
        true => {
            println!(
                "structure: {} files, no circles, none over {MAX_LINES} lines of code",
                all_sizes.len()
            );
            Ok(())
        }
        false => {
            eprint!("{problems}");
            Err("structure: the sources break the layout rules above".into())
        }
    }
}

/// What the check finds in one crate's `src/`.
#[derive(Debug, Default)]
pub(crate) struct Report {
    /// Circles among files, each a chain of files (the last uses the first), with the path
    /// each uses of the next.
    pub file_circles: Vec<Vec<(String, String)>>,
    /// Every file of each tangle the file circles run through (a circle is one way round it).
    pub file_tangles: Vec<Vec<String>>,
    /// Circles among top-level modules, likewise.
    pub module_circles: Vec<Vec<(String, String)>>,
    /// Every file (from `src/`) and its lines of code.
    pub sizes: Vec<(String, usize)>,
    /// Every dependency between files.
    pub files: Graph,
}

impl Report {
    /// The files over [`MAX_LINES`].
    pub(crate) fn oversized(&self) -> impl Iterator<Item = &(String, usize)> {
        self.sizes.iter().filter(|(_, lines)| *lines > MAX_LINES)
    }

    /// The problems found, one paragraph each, files named from `krate`.
    fn render(&self, krate: &str) -> String {
        let mut out = String::new();
        let chain = |out: &mut String, what: &str, circle: &[(String, String)]| {
            let names: Vec<&str> = circle.iter().map(|(f, _)| f.as_str()).collect();
            let _ = writeln!(
                out,
                "{krate}: {what} circle: {} -> {}",
                names.join(" -> "),
                names[0]
            );
            for (i, (from, how)) in circle.iter().enumerate() {
                let to = &circle[(i + 1) % circle.len()].0;
                let _ = writeln!(out, "  {from} -> {to}: {how}");
            }
        };
        for circle in &self.module_circles {
            chain(&mut out, "module", circle);
        }
        for (circle, tangle) in self.file_circles.iter().zip(&self.file_tangles) {
            chain(&mut out, "file", circle);
            if tangle.len() > circle.len() {
                let _ = writeln!(out, "  (one way round {})", tangle.join(", "));
            }
        }
        for (file, lines) in self.oversized() {
            let _ = writeln!(
                out,
                "{krate}/{file}: {lines} lines of code (at most {MAX_LINES})"
            );
        }
        out
    }
}

/// Checks one crate's sources.
pub(crate) fn check(src: &Path) -> Result<Report, Error> {
    let files = file_modules(src)?;
    let mut sources = BTreeMap::new();
    for (module, path) in &files {
        let source = std::fs::read_to_string(path)
            .map_err(|e| format!("{} is not readable: {e}", path.display()))?;
        sources.insert(module.clone(), source);
    }
    let name = |path: &Path| {
        let relative = path.strip_prefix(src).unwrap_or(path);
        relative.to_string_lossy().replace('\\', "/")
    };
    let mut sizes: Vec<(String, usize)> = files
        .iter()
        .map(|(module, path)| (name(path), lines_of_code(&sources[module])))
        .collect();
    sizes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));

    let facts: BTreeMap<Vec<String>, FileFacts> = sources
        .iter()
        .map(|(module, source)| (module.clone(), file_facts(source, module)))
        .collect();
    let mut file_graph = Graph::new();
    let mut module_graph = Graph::new();
    for (module, file_facts) in &facts {
        let from = name(&files[module]);
        // A glob takes the module's own items and what it re-exports.
        let globbed = file_facts.globs.iter().flat_map(|glob| {
            let shown = (facts.get(glob).into_iter())
                .flat_map(|f| f.reexports.iter().map(|(_, target)| target.clone()));
            std::iter::once(glob.clone()).chain(shown)
        });
        for used in file_facts.uses.iter().cloned().chain(globbed) {
            let used = &used;
            let Some(target) = resolve(used, &files, &facts, 0) else {
                continue;
            };
            let to = name(target);
            if to == from {
                continue;
            }
            let how = used.join("::");
            file_graph
                .entry(from.clone())
                .or_default()
                .entry(to.clone())
                .or_default()
                .insert(how.clone());
            if let (Some(a), Some(b)) = (top_module(&from), top_module(&to))
                && a != b
            {
                module_graph
                    .entry(a)
                    .or_default()
                    .entry(b)
                    .or_default()
                    .insert(format!("{from}: {how}"));
            }
        }
    }
    Ok(Report {
        file_circles: circles(&file_graph),
        file_tangles: tangles(&file_graph),
        files: file_graph,
        module_circles: circles(&module_graph),
        sizes,
    })
}

/// The top-level module a file belongs to (`server/http/body.rs` → `server`); none for the
/// crate root.
fn top_module(file: &str) -> Option<String> {
    let first = file.split('/').next()?;
    match first {
        "lib.rs" | "main.rs" => None,
        _ => Some(first.trim_end_matches(".rs").to_owned()),
    }
}

/// Lines that hold code: neither blank nor only comment.
pub(crate) fn lines_of_code(source: &str) -> usize {
    strip(source, false)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count()
}

/// The source without comments, string literals and character literals (each replaced by a
/// space, line breaks kept), so that only code is searched for paths.
fn code_only(source: &str) -> String {
    strip(source, true)
}

/// The source without comments, and without string and character literals when `literals`.
/// Every line break stays, so that lines keep their numbers.
fn strip(source: &str, literals: bool) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    // What was skipped from `from` to `to`: a space, and the line breaks it held.
    let skipped = |out: &mut String, from: usize, to: usize| {
        out.push(' ');
        let end = to.min(chars.len());
        for _ in chars[from.min(end)..end].iter().filter(|&&c| c == '\n') {
            out.push('\n');
        }
    };
    let literal = |out: &mut String, from: usize, to: usize| match literals {
        true => skipped(out, from, to),
        false => out.extend(&chars[from..to.min(chars.len())]),
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match (c, next) {
            ('/', Some('/')) => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            ('/', Some('*')) => {
                let start = i;
                let mut depth = 0;
                while i < chars.len() {
                    if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                        depth += 1;
                        i += 2;
                    } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                skipped(&mut out, start, i);
            }
            ('r' | 'b', Some('"' | '#' | 'r')) if !is_ident(i.checked_sub(1).map(|p| chars[p])) => {
                // A raw or byte string: r"..", r#".."#, b"..", br#".."#.
                let start = i;
                let mut j = i + 1;
                if c == 'b' && chars.get(j) == Some(&'r') {
                    j += 1;
                }
                let raw = c == 'r' || chars[j - 1] == 'r';
                let mut hashes = 0;
                while raw && chars.get(j) == Some(&'#') {
                    hashes += 1;
                    j += 1;
                }
                if chars.get(j) != Some(&'"') {
                    out.push(c);
                    i += 1;
                    continue;
                }
                j += 1;
                loop {
                    match chars.get(j) {
                        None => break,
                        Some('\\') if !raw => j += 2,
                        Some('"') if (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) => {
                            j += 1 + hashes;
                            break;
                        }
                        Some(_) => j += 1,
                    }
                }
                literal(&mut out, start, j);
                i = j;
            }
            ('"', _) => {
                let start = i;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                literal(&mut out, start, i);
            }
            ('\'', _) => {
                // A character literal ('x', '\n', '\u{1F600}', '"'), or else a lifetime.
                let end = if next == Some('\\') {
                    chars[(i + 2).min(chars.len())..]
                        .iter()
                        .position(|&c| c == '\'')
                        .map(|p| i + 3 + p)
                } else {
                    (chars.get(i + 2) == Some(&'\'')).then_some(i + 3)
                };
                match end {
                    Some(end) => {
                        literal(&mut out, i, end);
                        i = end;
                    }
                    None => {
                        out.push(c);
                        i += 1;
                    }
                }
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

fn is_ident(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || c == '_')
}

fn tokenize(code: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(chars[start..i].iter().collect());
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            tokens.push("::".into());
            i += 2;
        } else {
            tokens.push(c.to_string());
            i += 1;
        }
    }
    tokens
}

/// Every `.rs` file under `src`, by the module path it holds (`server/http/body.rs` holds
/// `server::http::body`, `server/http/mod.rs` holds `server::http`, `lib.rs` the root).
fn file_modules(src: &Path) -> Result<BTreeMap<Vec<String>, PathBuf>, Error> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| format!("{} is not readable: {e}", dir.display()))?;
        for entry in entries {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).unwrap_or(&path);
            let mut module: Vec<String> = relative
                .iter()
                .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
                .collect();
            let root = module.len() == 1 && matches!(module[0].as_str(), "lib" | "main");
            if root || module.last().is_some_and(|m| m == "mod") {
                module.pop();
            }
            out.insert(module, path);
        }
    }
    // A module declared with another file (`#[path = "private.rs"] pub mod __private;`) is
    // known by its declared name.
    if let Some(root) = out.get(&Vec::new()) {
        let source = std::fs::read_to_string(root)?;
        let tokens = tokenize(&strip(&source, false));
        let renamed: Vec<(String, String)> = tokens
            .windows(9)
            .filter(|w| w[0] == "#" && w[1] == "[" && w[2] == "path" && w[3] == "=")
            .filter_map(|w| {
                let file = w[4].trim_matches('"').trim_end_matches(".rs").to_owned();
                let at = w.iter().position(|t| t == "mod")?;
                Some((file, w.get(at + 1)?.clone()))
            })
            .collect();
        for (file, declared) in renamed {
            if let Some(path) = out.remove(&vec![file]) {
                out.insert(vec![declared], path);
            }
        }
    }
    Ok(out)
}

/// What one file says of the others: the module paths it uses, and what it re-exports (a
/// `pub use`, which shows an item where it is not defined without using it).
#[derive(Debug, Default)]
struct FileFacts {
    uses: Vec<Vec<String>>,
    /// Each re-exported name, and the path it names.
    reexports: Vec<(String, Vec<String>)>,
    /// The modules this file takes everything of (`use super::*`).
    globs: Vec<Vec<String>>,
}

/// A use tree read with its original names: each leaf's path, and the name it is known by
/// (`*` for a glob).
fn use_tree(
    tokens: &[String],
    at: usize,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, String)>,
) -> usize {
    let mut path = prefix;
    let mut i = at;
    loop {
        match tokens.get(i).map(String::as_str) {
            Some("{") => {
                i += 1;
                loop {
                    match tokens.get(i).map(String::as_str) {
                        Some("}") => return i + 1,
                        Some(",") => i += 1,
                        None => return i,
                        Some(_) => i = use_tree(tokens, i, path.clone(), out),
                    }
                }
            }
            Some("self") if tokens.get(i + 1).map(String::as_str) != Some("::") => {
                // `use a::{self, b}`: the module itself.
                let known = path.last().cloned().unwrap_or_default();
                i += 1;
                if tokens.get(i).map(String::as_str) == Some("as") {
                    i += 2;
                }
                out.push((path, known));
                return i;
            }
            Some(name) if name.chars().all(|c| c.is_alphanumeric() || c == '_') => {
                path.push(name.to_owned());
                i += 1;
                if tokens.get(i).map(String::as_str) == Some("::") {
                    i += 1;
                    continue;
                }
                let mut known = name.to_owned();
                if tokens.get(i).map(String::as_str) == Some("as") {
                    known = tokens.get(i + 1).cloned().unwrap_or(known);
                    i += 2;
                }
                out.push((path, known));
                return i;
            }
            Some("*") => {
                out.push((path, "*".to_owned()));
                return i + 1;
            }
            _ => {
                if let Some(last) = path.last().cloned() {
                    out.push((path, last));
                }
                return i;
            }
        }
    }
}

/// Tokens after which a name is declared or reached through something else, not used as the
/// name a `pub use` brought in.
const NOT_A_USE_AFTER: [&str; 11] = [
    "::", ".", "mod", "fn", "struct", "enum", "trait", "type", "const", "static", "union",
];

/// The file's uses and re-exports, as module paths from the crate root. A path is rooted at
/// `crate`, `self`, `super` (as many as written) or a module the file declares (`mod x;`).
fn file_facts(source: &str, module: &[String]) -> FileFacts {
    let tokens = tokenize(&code_only(source));
    let children: BTreeSet<&str> = tokens
        .windows(3)
        .filter(|w| w[0] == "mod" && w[2] == ";")
        .map(|w| w[1].as_str())
        .collect();
    // The inline module (`mod tests { .. }`) each token sits in, for `super` and `self`.
    let mut inline: Vec<Vec<String>> = Vec::with_capacity(tokens.len());
    let mut open: Vec<Option<String>> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    for (k, token) in tokens.iter().enumerate() {
        match token.as_str() {
            "{" => {
                let named = (k >= 2 && tokens[k - 2] == "mod").then(|| tokens[k - 1].clone());
                if let Some(name) = &named {
                    current.push(name.clone());
                }
                open.push(named);
            }
            "}" => {
                if let Some(Some(_)) = open.pop() {
                    current.pop();
                }
            }
            _ => {}
        }
        inline.push(current.clone());
    }
    let mut facts = FileFacts::default();
    // Tokens inside `use` items, which are not uses of a re-exported name.
    let mut in_use = vec![false; tokens.len()];
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i] == "use" {
            let end = (i..tokens.len())
                .find(|&k| tokens[k] == ";")
                .unwrap_or(tokens.len());
            in_use[i..end].iter_mut().for_each(|t| *t = true);
        }
        // A `pub use` (of any visibility) re-exports: it is a table of contents, not a use.
        let reexport = tokens[i] == "use" && {
            let before = &tokens[..i];
            matches!(before.last().map(String::as_str), Some("pub"))
                || (before.len() >= 4
                    && before[before.len() - 1] == ")"
                    && before[before.len() - 4] == "pub")
        };
        let start = match tokens[i].as_str() {
            "use" => i + 1,
            _ => i,
        };
        let previous = start.checked_sub(1).map(|p| tokens[p].as_str());
        let first = tokens.get(start).map(String::as_str);
        let rooted = matches!(first, Some("crate" | "self" | "super"))
            || first.is_some_and(|f| children.contains(f));
        if previous == Some("::")
            || !rooted
            || tokens.get(start + 1).map(String::as_str) != Some("::")
        {
            i += 1;
            continue;
        }
        let mut here = module.to_vec();
        here.extend(inline[start].iter().cloned());
        let mut base: Vec<String> = match first {
            Some("crate") => Vec::new(),
            _ => here,
        };
        let mut j = start;
        match first {
            Some("crate" | "self") => j += 2,
            Some("super") => {
                while tokens.get(j).map(String::as_str) == Some("super")
                    && tokens.get(j + 1).map(String::as_str) == Some("::")
                {
                    base.pop();
                    j += 2;
                }
            }
            _ => {}
        }
        let mut found = Vec::new();
        let end = use_tree(&tokens, j, base, &mut found);
        for (path, known) in found {
            match (known.as_str(), reexport) {
                ("*", _) => facts.globs.push(path),
                (_, true) => facts.reexports.push((known, path)),
                (_, false) => facts.uses.push(path),
            }
        }
        i = end.max(i + 1);
    }
    // A name the file re-exports and also uses in its own code.
    let used_here = |name: &str| {
        tokens.iter().enumerate().any(|(k, t)| {
            t == name
                && !in_use[k]
                && !k
                    .checked_sub(1)
                    .is_some_and(|p| NOT_A_USE_AFTER.contains(&tokens[p].as_str()))
        })
    };
    let also_used: Vec<Vec<String>> = (facts.reexports.iter())
        .filter(|(name, _)| used_here(name))
        .map(|(_, path)| path.clone())
        .collect();
    facts.uses.extend(also_used);
    facts
}

/// The file that defines what `path` names: its deepest module that is a file, through the
/// re-exports of the modules on the way.
fn resolve<'a>(
    path: &[String],
    files: &'a BTreeMap<Vec<String>, PathBuf>,
    facts: &BTreeMap<Vec<String>, FileFacts>,
    depth: usize,
) -> Option<&'a PathBuf> {
    let mut at = path.len();
    while !files.contains_key(&path[..at]) {
        at = at.checked_sub(1)?;
    }
    let module = &path[..at];
    if depth < 8
        && let Some(next) = path.get(at)
        && let Some((_, target)) = facts
            .get(module)
            .and_then(|f| f.reexports.iter().find(|(name, _)| name == next))
    {
        let mut through = target.clone();
        through.extend_from_slice(&path[at + 1..]);
        if let Some(file) = resolve(&through, files, facts, depth + 1) {
            return Some(file);
        }
    }
    files.get(module)
}

/// From → to → how (the paths used), for every dependency.
pub(crate) type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// One circle per tangle (a strongly connected group of two or more): the shortest chain from
/// its first member back to it, each step with the first path it uses of the next.
fn circles(graph: &Graph) -> Vec<Vec<(String, String)>> {
    let mut out = Vec::new();
    for group in tangles(graph) {
        let start = &group[0];
        let inside = |n: &String| group.contains(n);
        // Breadth first from `start`'s successors back to `start`, inside the group.
        let mut previous: BTreeMap<&String, &String> = BTreeMap::new();
        let mut queue: VecDeque<&String> = VecDeque::new();
        for next in graph[start].keys().filter(|n| inside(n)) {
            if !previous.contains_key(next) {
                previous.insert(next, start);
                queue.push_back(next);
            }
        }
        while let Some(at) = queue.pop_front() {
            if at == start {
                break;
            }
            for next in graph.get(at).into_iter().flat_map(|m| m.keys()) {
                if inside(next) && !previous.contains_key(next) {
                    previous.insert(next, at);
                    queue.push_back(next);
                }
            }
        }
        let mut chain = vec![start.clone()];
        let mut at = previous[start];
        while at != start {
            chain.push(at.clone());
            at = previous[at];
        }
        chain[1..].reverse();
        let steps = (0..chain.len())
            .map(|i| {
                let (from, to) = (&chain[i], &chain[(i + 1) % chain.len()]);
                let how = graph[from][to].iter().next().cloned().unwrap_or_default();
                (from.clone(), how)
            })
            .collect();
        out.push(steps);
    }
    out
}

/// The strongly connected groups of two or more nodes (Tarjan's algorithm), each sorted, in
/// the order of their first member.
fn tangles(graph: &Graph) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g String, usize>,
        low: BTreeMap<&'g String, usize>,
        stack: Vec<&'g String>,
        on_stack: BTreeSet<&'g String>,
        groups: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, node: &'g String) {
        let n = s.index.len();
        s.index.insert(node, n);
        s.low.insert(node, n);
        s.stack.push(node);
        s.on_stack.insert(node);
        for next in s.graph.get(node).into_iter().flat_map(|m| m.keys()) {
            if !s.index.contains_key(next) {
                visit(s, next);
                let low = s.low[node].min(s.low[next]);
                s.low.insert(node, low);
            } else if s.on_stack.contains(next) {
                let low = s.low[node].min(s.index[next]);
                s.low.insert(node, low);
            }
        }
        if s.low[node] == s.index[node] {
            let mut group = Vec::new();
            while let Some(member) = s.stack.pop() {
                s.on_stack.remove(member);
                group.push(member.clone());
                if member == node {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                s.groups.push(group);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        groups: Vec::new(),
    };
    for node in graph.keys() {
        if !state.index.contains_key(node) {
            visit(&mut state, node);
        }
    }
    let mut groups = state.groups;
    groups.sort();
    groups
}

#[cfg(test)]
mod tests;
