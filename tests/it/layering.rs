//! The runtime's modules depend on each other in one direction: no top-level module (a file, or a
//! directory with everything under it) uses one that uses it back, directly or through others.
//!
//! Every dependency counts, not only `use` lines: `use` groups over several lines, paths written
//! inline (`crate::envelope::escape_text(..)`, `super::super::tool::Context`), and names taken
//! from the crate root (`crate::ToolError`), resolved through `lib.rs`'s `pub use` to the module
//! that defines them. Comments, strings and character literals are not code and are skipped.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Which module each file belongs to, and how deep it sits (`x.rs` and `x/mod.rs` are 1).
fn modules(src: &Path) -> Vec<(String, usize, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("the source folder is readable") {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).expect("under src");
            let parts: Vec<String> = relative
                .iter()
                .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
                .collect();
            let top = parts[0].clone();
            if top == "lib" {
                continue;
            }
            let depth = parts.len() - usize::from(parts.last().is_some_and(|p| p == "mod"));
            out.push((top, depth, path));
        }
    }
    out.sort();
    out
}

/// The source without comments, string literals and character literals (each replaced by a
/// space), so that only code is searched for paths.
fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
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
                out.push(' ');
            }
            ('r', Some('"' | '#')) if !is_ident(chars.get(i.wrapping_sub(1)).copied()) => {
                // A raw string: r"..." or r#"..."#, with as many hashes on both ends.
                let mut j = i + 1;
                let mut hashes = 0;
                while chars.get(j) == Some(&'#') {
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
                        Some('"') if (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) => {
                            j += 1 + hashes;
                            break;
                        }
                        Some(_) => j += 1,
                    }
                }
                i = j;
                out.push(' ');
            }
            ('"', _) => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                out.push(' ');
            }
            ('\'', _) => {
                // A character literal ('x', '\n', '\u{1F600}', '"'), or else a lifetime.
                let end = if next == Some('\\') {
                    chars[i + 2..]
                        .iter()
                        .position(|&c| c == '\'')
                        .map(|p| i + 3 + p)
                } else {
                    (chars.get(i + 2) == Some(&'\'')).then_some(i + 3)
                };
                match end {
                    Some(end) => {
                        i = end;
                        out.push(' ');
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

/// Every path that starts at the crate root, written out whole: `crate::a::{b, c::D}` gives
/// `a::b` and `a::c::D`; `super::` steps that climb past the file's own module reach the root.
fn root_paths(code: &str, depth: usize) -> Vec<Vec<String>> {
    let tokens = tokenize(code);
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let previous = i.checked_sub(1).map(|p| tokens[p].as_str());
        if previous == Some("::") {
            i += 1;
            continue;
        }
        let (rooted, mut j) = match tokens[i].as_str() {
            "crate" => (true, i + 1),
            "super" => {
                let mut j = i;
                let mut climbs = 0;
                while tokens.get(j).map(String::as_str) == Some("super")
                    && tokens.get(j + 1).map(String::as_str) == Some("::")
                {
                    climbs += 1;
                    j += 2;
                }
                // `j` sits after the last `super::`; step back onto its `::`.
                (climbs >= depth, j.saturating_sub(1))
            }
            _ => (false, i),
        };
        if rooted && tokens.get(j).map(String::as_str) == Some("::") {
            j += 1;
            let mut found = Vec::new();
            let end = tree(&tokens, j, Vec::new(), &mut found);
            out.extend(found);
            i = end;
        } else {
            i += 1;
        }
    }
    out
}

/// Reads one use tree starting at `at` (after a `::`): a name, a path, or a `{..}` group.
fn tree(tokens: &[String], at: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
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
                        Some(_) => i = tree(tokens, i, path.clone(), out),
                    }
                }
            }
            Some(name) if name.chars().all(|c| c.is_alphanumeric() || c == '_') => {
                path.push(name.to_owned());
                i += 1;
                if tokens.get(i).map(String::as_str) == Some("::") {
                    i += 1;
                    continue;
                }
                if tokens.get(i).map(String::as_str) == Some("as") {
                    // Renamed: the path is known by its new name from here on.
                    if let (Some(last), Some(alias)) = (path.last_mut(), tokens.get(i + 1)) {
                        *last = alias.clone();
                    }
                    i += 2;
                }
                out.push(path);
                return i;
            }
            Some("*") => {
                out.push(path);
                return i + 1;
            }
            _ => {
                if !path.is_empty() {
                    out.push(path);
                }
                return i;
            }
        }
    }
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

/// The names `lib.rs` re-exports, with the module that defines each.
fn root_names(lib: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for path in root_paths(&code_only(lib).replace("pub use ", "crate::"), 1) {
        if let [module, .., name] = path.as_slice()
            && modules.contains(module)
        {
            names.insert(name.clone(), module.clone());
        }
    }
    names
}

/// Module → module → where (file: names), for every dependency between top-level modules.
type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

fn graph(src: &Path) -> Graph {
    let files = modules(src);
    let names: BTreeSet<String> = files.iter().map(|(m, _, _)| m.clone()).collect();
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    // `#[path = "private.rs"] pub mod __private;`: the file's module is `private`.
    let root = root_names(&lib, &names);
    let mut graph = Graph::new();
    for (module, depth, path) in &files {
        let source = std::fs::read_to_string(path).expect("a readable source file");
        for used in root_paths(&code_only(&source), *depth) {
            let target = match used.first() {
                Some(first) if names.contains(first) => first.clone(),
                Some(first) => match root.get(first) {
                    Some(defined_in) => defined_in.clone(),
                    None => continue,
                },
                None => continue,
            };
            if &target != module {
                let file = path.strip_prefix(src).unwrap_or(path).display().to_string();
                graph
                    .entry(module.clone())
                    .or_default()
                    .entry(target)
                    .or_default()
                    .insert(format!("{file}: {}", used.join("::")));
            }
        }
    }
    graph
}

/// Each cycle's modules, in order, found by a depth-first search from every module.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    let mut found: Vec<Vec<String>> = Vec::new();
    for start in graph.keys() {
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        while let Some((at, path)) = stack.pop() {
            for next in graph.get(&at).into_iter().flat_map(|m| m.keys()) {
                if next == start {
                    let mut cycle = path.clone();
                    // The same cycle from another start: keep one, rotated to its smallest name.
                    let smallest = (0..cycle.len()).min_by_key(|&i| &cycle[i]).unwrap_or(0);
                    cycle.rotate_left(smallest);
                    if !found.contains(&cycle) {
                        found.push(cycle);
                    }
                } else if !path.contains(next) && next > start {
                    let mut longer = path.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
    }
    found
}

#[test]
fn no_module_uses_one_that_uses_it_back() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("runtime/src");
    let graph = graph(&src);
    let mut report = String::new();
    for cycle in cycles(&graph) {
        report.push_str(&format!("cycle: {} -> {}\n", cycle.join(" -> "), cycle[0]));
        for (i, from) in cycle.iter().enumerate() {
            let to = &cycle[(i + 1) % cycle.len()];
            for place in &graph[from][to] {
                report.push_str(&format!("  {from} -> {to}: {place}\n"));
            }
        }
    }
    println!("module graph:");
    for (from, targets) in &graph {
        let to: Vec<&str> = targets.keys().map(String::as_str).collect();
        println!("  {from} -> {}", to.join(", "));
    }
    assert!(report.is_empty(), "modules that use each other:\n{report}");
}

#[test]
fn the_reader_sees_every_kind_of_dependency() {
    let lib = "pub use envelope::{ToolError, error};\npub use tool::{\n    Context,\n    Tool as Trait,\n};";
    let modules: BTreeSet<String> = ["envelope", "tool", "server"]
        .into_iter()
        .map(String::from)
        .collect();
    let root = root_names(lib, &modules);
    assert_eq!(root["ToolError"], "envelope");
    assert_eq!(root["Trait"], "tool");
    let source = r##"
        use crate::{
            server::{Pipeline, pipeline::Rate},
            ToolError,
        };
        // use crate::commented::Out;
        fn f() -> crate::tool::Context {
            let s = "crate::in_a_string::No";
            let c = '"';
            let r = r#"crate::raw::No"#;
            super::super::envelope::escape_text(&mut String::new(), "x");
            crate::error(crate::ErrorCode::X, 'x')
        }
    "##;
    let at_depth_two: Vec<String> = root_paths(&code_only(source), 2)
        .iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(
        at_depth_two,
        [
            "server::Pipeline",
            "server::pipeline::Rate",
            "ToolError",
            "tool::Context",
            "envelope::escape_text",
            "error",
            "ErrorCode::X",
        ]
    );
    // From a top-level file, one `super::` reaches the root; from deeper, it does not.
    assert_eq!(root_paths("super::tool::Tool", 1), [vec!["tool", "Tool"]]);
    assert!(root_paths("super::pipeline::Rate", 2).is_empty());
}

/// Every `.rs` file under `src`, by the module path it holds (`server/http/body.rs` holds
/// `server::http::body`, `server/http/mod.rs` holds `server::http`, `lib.rs` the root).
fn file_modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("the source folder is readable") {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).expect("under src");
            let mut module: Vec<String> = relative
                .iter()
                .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
                .collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            // `#[path = "private.rs"] pub mod __private;`
            if module == ["private"] {
                module = vec!["__private".to_owned()];
            }
            out.insert(module, path);
        }
    }
    out
}

/// What one file says of the others: the module paths it uses, and what it re-exports (a
/// `pub use`, which shows an item where it is not defined without using it).
#[derive(Default)]
struct FileFacts {
    uses: Vec<Vec<String>>,
    /// Each re-exported name, and the path it names.
    reexports: Vec<(String, Vec<String>)>,
}

/// A use tree read with its original names: each leaf's path, and the name it is known by.
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
    let mut open: Vec<(Option<String>, usize)> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    for (k, token) in tokens.iter().enumerate() {
        match token.as_str() {
            "{" => {
                let named = (k >= 2 && tokens[k - 2] == "mod").then(|| tokens[k - 1].clone());
                if let Some(name) = &named {
                    current.push(name.clone());
                }
                open.push((named, current.len()));
            }
            "}" => {
                if let Some((Some(_), _)) = open.pop() {
                    current.pop();
                }
            }
            _ => {}
        }
        inline.push(current.clone());
    }
    let mut facts = FileFacts::default();
    let mut i = 0;
    while i < tokens.len() {
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
            if known == "*" {
                continue;
            }
            match reexport {
                true => facts.reexports.push((known, path)),
                false => facts.uses.push(path),
            }
        }
        i = end.max(i + 1);
    }
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

/// File → file → where (the path used), for every file under `runtime/src`.
fn file_graph(src: &Path) -> Graph {
    let files = file_modules(src);
    let facts: BTreeMap<Vec<String>, FileFacts> = files
        .iter()
        .map(|(module, path)| {
            let source = std::fs::read_to_string(path).expect("a readable source file");
            (module.clone(), file_facts(&source, module))
        })
        .collect();
    let name = |path: &Path| path.strip_prefix(src).unwrap_or(path).display().to_string();
    let mut graph = Graph::new();
    for (module, file_facts) in &facts {
        let from = name(&files[module]);
        for used in &file_facts.uses {
            let Some(target) = resolve(used, &files, &facts, 0) else {
                continue;
            };
            let to = name(target);
            if to != from {
                graph
                    .entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_default()
                    .insert(used.join("::"));
            }
        }
    }
    graph
}

fn cycle_report(graph: &Graph, within: impl Fn(&str) -> bool) -> String {
    let mut report = String::new();
    for cycle in cycles(graph) {
        if !cycle.iter().all(|file| within(file)) {
            continue;
        }
        report.push_str(&format!("cycle: {} -> {}\n", cycle.join(" -> "), cycle[0]));
        for (i, from) in cycle.iter().enumerate() {
            let to = &cycle[(i + 1) % cycle.len()];
            for place in &graph[from][to] {
                report.push_str(&format!("  {from} -> {to}: {place}\n"));
            }
        }
    }
    report
}

/// The files of `server/` depend on each other one way: none uses one that uses it back,
/// directly or through others (a `pub use` of a module's table of contents is no use).
#[test]
fn no_file_of_the_server_uses_one_that_uses_it_back() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("runtime/src");
    let graph = file_graph(&src);
    let elsewhere = cycle_report(&graph, |file| !file.starts_with("server/"));
    if !elsewhere.is_empty() {
        println!("files outside server/ that use each other:\n{elsewhere}");
    }
    let server = cycle_report(&graph, |file| file.starts_with("server/"));
    assert!(
        server.is_empty(),
        "files of server/ that use each other:\n{server}"
    );
}

/// No file of `server/` holds more than 600 lines of code (comments and blank lines aside).
#[test]
fn no_file_of_the_server_is_over_600_lines_of_code() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("runtime/src");
    let mut over = Vec::new();
    for path in file_modules(&src).into_values() {
        let relative = path.strip_prefix(&src).expect("under src").to_path_buf();
        if !relative.starts_with("server") {
            continue;
        }
        let source = std::fs::read_to_string(&path).expect("a readable source file");
        let code = code_only(&source);
        let lines = code.lines().filter(|l| !l.trim().is_empty()).count();
        if lines > 600 {
            over.push(format!("{}: {lines} lines of code", relative.display()));
        }
    }
    assert!(
        over.is_empty(),
        "files over 600 lines of code:\n{}",
        over.join("\n")
    );
}

#[test]
fn the_file_reader_sees_every_kind_of_dependency() {
    let source = r#"
        mod child;
        pub use child::Shown;
        pub(crate) use self::child::Also;
        use super::{sibling::Thing, other};
        use crate::top::{a::B, c};
        fn f() { child::helper(); super::super::root::x(); crate::top::d::E::new(); }
        mod tests { use super::*; use super::child::Inside; }
    "#;
    let module = ["server".to_owned(), "http".to_owned()];
    let facts = file_facts(source, &module);
    let uses: Vec<String> = facts.uses.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        uses,
        [
            "server::sibling::Thing",
            "server::other",
            "top::a::B",
            "top::c",
            "server::http::child::helper",
            "root::x",
            "top::d::E::new",
            "server::http::child::Inside",
        ]
    );
    let reexports: Vec<String> = (facts.reexports.iter())
        .map(|(name, path)| format!("{name}={}", path.join("::")))
        .collect();
    assert_eq!(
        reexports,
        [
            "Shown=server::http::child::Shown",
            "Also=server::http::child::Also"
        ]
    );
}
