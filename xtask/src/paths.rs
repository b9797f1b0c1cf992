//! `cargo xtask paths`: every path of this repository that a comment or a Markdown file names
//! exists. Standard library only, no build: it reads files.
//!
//! What is read: the comments (`//`, `///`, `//!`, and a trailing `// …` after code) of the
//! `.rs` files, and the whole of the `.md` files, under [`SCANNED`] and the workspace's own
//! Markdown files (`README.md`, `CHANGELOG.md`, …). `target/`, `node_modules/` and hidden
//! directories are skipped.
//!
//! What counts as a path (kept simple on purpose):
//!
//! - URLs (`scheme://…`) are removed first; a token is then a run of letters, digits and
//!   `_ - . /` (so `server/call.rs:12`, `` `tests/it/support.rs` `` and the target of a
//!   Markdown link `[x](../shared/spec/ERRORS.md)` are all seen, without their punctuation).
//! - A token with a `/` is a path when it starts with a directory of the workspace (`runtime/`,
//!   `tests/`, …), with `src/`, `shared/` or `../`, or when it ends in a file extension of
//!   [`EXTENSIONS`] (`server/call.rs`). Other slashes are protocol names and prose
//!   (`tools/call`, `text/event-stream`, `and/or`), not paths.
//! - A token without `/` is a path when it ends in an extension of [`EXTENSIONS`] (`call.rs`).
//! - Not checked: a placeholder (a segment of one letter, `x/mod.rs`, or `path/to/…`); the
//!   paths right after an `owner/repo` reference, which are that repository's
//!   (`modelcontextprotocol/rust-sdk crates/rmcp/src/model.rs, crates/rmcp/src/lib.rs`: every
//!   path that follows it, up to the first token that is no path); and [`ALLOWED`], paths of
//!   no file of the repository on purpose, each with its reason.
//!
//! Where a path may be: the workspace root, the commenting file's crate (`src/` and the
//! crate's root), `runtime/src/` (the library the other crates and the tests describe), the
//! commenting file's own directory, and the shared spec beside the checkout (`../shared/`,
//! which comments cite as `shared/spec/ERRORS.md`). A path without extension may name a
//! `.rs` file (`examples/everything`, the example). A bare file name (`call.rs`) names a file
//! anywhere in the workspace or under `../shared/`: comments name a module's sibling by its
//! name alone, so only a name no file has any more is stale.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The directories scanned, from the workspace root.
pub(crate) const SCANNED: [&str; 6] =
    ["runtime", "macros", "drivers", "xtask", "tests", "examples"];

/// The extensions that make a token a file's name.
pub(crate) const EXTENSIONS: [&str; 6] = ["rs", "md", "json", "toml", "yml", "yaml"];

/// Paths that are no file of this repository on purpose.
pub(crate) const ALLOWED: [(&str, &str); 4] = [
    (
        "checks.json",
        "written by the conformance suite, one per scenario, under target/conformance/",
    ),
    (
        "src/main.rs",
        "the quick start's own crate, which the README has the reader write",
    ),
    ("fuzz/target", "made by cargo fuzz"),
    ("fuzz/corpus/", "made by cargo fuzz"),
];

/// A path a comment names that does not exist.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Missing {
    /// The commenting file, from the workspace root.
    pub file: PathBuf,
    /// Its line, from 1.
    pub line: usize,
    /// The path as written.
    pub path: String,
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: names `{}`, which does not exist",
            self.file.display(),
            self.line,
            self.path
        )
    }
}

/// Checks the workspace at `root`; an error lists every missing path.
pub(crate) fn run(root: &Path) -> Result<(), String> {
    let missing = check(root)?;
    if missing.is_empty() {
        return Ok(());
    }
    let lines: Vec<String> = missing.iter().map(ToString::to_string).collect();
    Err(format!(
        "{} comment(s) name a path that does not exist:\n{}",
        missing.len(),
        lines.join("\n")
    ))
}

/// Every missing path the comments and Markdown files under `root` name, in file order.
pub(crate) fn check(root: &Path) -> Result<Vec<Missing>, String> {
    let mut files = Vec::new();
    for dir in SCANNED {
        walk(&root.join(dir), &mut files)?;
    }
    for entry in read_dir(root)? {
        if entry.extension().is_some_and(|e| e == "md") && entry.is_file() {
            files.push(entry);
        }
    }
    files.sort();
    let workspace = Workspace::new(root)?;
    let mut missing = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let markdown = file.extension().is_some_and(|e| e == "md");
        for (i, line) in text.lines().enumerate() {
            let said = if markdown { Some(line) } else { comment(line) };
            for path in said
                .into_iter()
                .flat_map(|said| paths(said, &workspace.dirs))
            {
                let allowed = ALLOWED.iter().any(|(allowed, _)| *allowed == path);
                if !allowed && !workspace.resolves(file, &path) {
                    missing.push(Missing {
                        file: file.strip_prefix(root).unwrap_or(file).to_path_buf(),
                        line: i + 1,
                        path,
                    });
                }
            }
        }
    }
    Ok(missing)
}

/// What the workspace has, to resolve paths against.
struct Workspace {
    root: PathBuf,
    /// The workspace's top-level directories, plus `src`, `shared` and `..`: the first
    /// segments that make a token with a `/` a path.
    dirs: BTreeSet<String>,
    /// Every file name under each crate (and under `../shared/`, keyed by that directory).
    names: Vec<(PathBuf, BTreeSet<String>)>,
}

impl Workspace {
    fn new(root: &Path) -> Result<Workspace, String> {
        let mut dirs: BTreeSet<String> = ["src", "shared", ".."].map(String::from).into();
        for entry in read_dir(root)? {
            let name = entry.file_name().unwrap_or_default().to_string_lossy();
            if entry.is_dir() && !skipped(&name) {
                dirs.insert(name.into_owned());
            }
        }
        let mut names = Vec::new();
        let shared = root.join("../shared");
        let mut homes: Vec<PathBuf> = vec![root.to_path_buf()];
        if shared.is_dir() {
            homes.push(shared);
        }
        for home in homes {
            let mut files = Vec::new();
            walk_all(&home, &mut files)?;
            let set = files
                .iter()
                .filter_map(|f| Some(f.file_name()?.to_string_lossy().into_owned()))
                .collect();
            names.push((home, set));
        }
        Ok(Workspace {
            root: root.to_path_buf(),
            dirs,
            names,
        })
    }

    /// Whether `path`, named in `file`, exists.
    fn resolves(&self, file: &Path, path: &str) -> bool {
        let krate = crate_of(file, &self.root);
        let mut bases = vec![
            self.root.clone(),
            krate.join("src"),
            krate.clone(),
            self.root.join("runtime/src"),
            file.parent().unwrap_or(&self.root).to_path_buf(),
            self.root.join("../shared"),
            self.root.join(".."),
        ];
        bases.dedup();
        let named = |base: &PathBuf| {
            base.join(path).exists()
                || (!has_extension(path) && base.join(format!("{path}.rs")).is_file())
        };
        if bases.iter().any(named) {
            return true;
        }
        // A bare name: a file of that name anywhere in the workspace or the shared spec.
        !path.contains('/') && self.names.iter().any(|(_, names)| names.contains(path))
    }
}

/// The comment of a line of Rust, if it has one: after a leading `//`, or after ` // ` that
/// follows code.
pub(crate) fn comment(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    if let Some(rest) = trimmed.strip_prefix("//") {
        return Some(rest);
    }
    line.find(" // ").map(|at| &line[at + 4..])
}

/// The paths of this repository that `text` names, given the workspace's top-level
/// directories `dirs` (see the module's documentation).
pub(crate) fn paths(text: &str, dirs: &BTreeSet<String>) -> Vec<String> {
    let text = without_urls(text);
    let tokens: Vec<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')))
        .filter(|t| !t.is_empty())
        .collect();
    let mut found = Vec::new();
    let mut after_repo = false;
    for token in tokens {
        let token = token.trim_end_matches('.');
        let token = token.trim_start_matches('-');
        let was_after_repo = std::mem::replace(&mut after_repo, false);
        if token.is_empty() {
            continue;
        }
        let path = if token.contains('/') {
            let first = token.trim_start_matches("./").split('/').next();
            first.is_some_and(|first| dirs.contains(first)) || has_extension(token)
        } else {
            has_extension(token)
        };
        if path && was_after_repo {
            after_repo = true; // The same repository's, as long as paths follow.
        } else if path && !placeholder(token) {
            found.push(token.to_owned());
        } else if !path && is_repository(token) {
            after_repo = true;
        }
    }
    found
}

/// A path that stands for any: `path/to/…`, or one with a segment of one letter (`x/mod.rs`).
fn placeholder(token: &str) -> bool {
    token.starts_with("path/to/")
        || token.split('/').any(|segment| {
            let stem = segment.split('.').next().unwrap_or_default();
            stem.len() == 1 && stem.chars().all(|c| c.is_ascii_alphabetic())
        })
}

/// `owner/repo`: two segments, no extension, the owner a GitHub name.
fn is_repository(token: &str) -> bool {
    let mut segments = token.split('/');
    let (Some(owner), Some(repo), None) = (segments.next(), segments.next(), segments.next())
    else {
        return false;
    };
    !owner.is_empty()
        && !repo.is_empty()
        && owner.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && repo
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn has_extension(token: &str) -> bool {
    let name = token.rsplit('/').next().unwrap_or(token);
    match name.rsplit_once('.') {
        Some((stem, extension)) => !stem.is_empty() && EXTENSIONS.contains(&extension),
        None => false,
    }
}

/// `text` with every `scheme://…` up to the next space, quote, backtick, `)` or `>` removed.
fn without_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let start = rest[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .map_or(0, |i| i + 1);
        out.push_str(&rest[..start]);
        let after = &rest[at + 3..];
        let end = after
            .find(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | ')' | '>'))
            .unwrap_or(after.len());
        out.push(' ');
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// The crate `file` belongs to: its nearest directory with a `Cargo.toml`, up to `root`.
fn crate_of(file: &Path, root: &Path) -> PathBuf {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d.join("Cargo.toml").is_file() || d == root {
            return d.to_path_buf();
        }
        dir = d.parent();
    }
    root.to_path_buf()
}

fn skipped(name: &str) -> bool {
    name.starts_with('.') || name == "target" || name == "node_modules"
}

fn read_dir(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut paths = Vec::new();
    for entry in entries {
        paths.push(
            entry
                .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
                .path(),
        );
    }
    paths.sort();
    Ok(paths)
}

/// The `.rs` and `.md` files under `dir`.
fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), String> {
    let mut all = Vec::new();
    walk_all(dir, &mut all)?;
    files.extend(
        all.into_iter()
            .filter(|f| f.extension().is_some_and(|e| e == "rs" || e == "md")),
    );
    Ok(())
}

/// Every file under `dir`, skipping `target/`, `node_modules/` and hidden directories.
fn walk_all(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), String> {
    if !dir.is_dir() {
        return Ok(());
    }
    for entry in read_dir(dir)? {
        let name = entry.file_name().unwrap_or_default().to_string_lossy();
        if entry.is_dir() {
            if !skipped(&name) {
                walk_all(&entry, files)?;
            }
        } else {
            files.push(entry);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs() -> BTreeSet<String> {
        ["runtime", "tests", "src", "shared", ".."]
            .map(String::from)
            .into()
    }

    #[test]
    fn paths_are_the_tokens_that_look_like_files_of_the_repository() {
        let said = " See `server/fast.rs` and tests/it/layering.rs:12, `handler.rs ~166`, x.rs.";
        assert_eq!(
            paths(said, &dirs()),
            ["server/fast.rs", "tests/it/layering.rs", "handler.rs"]
        );
        assert_eq!(
            paths("[ERRORS.md](../shared/spec/ERRORS.md)", &dirs()),
            ["ERRORS.md", "../shared/spec/ERRORS.md"]
        );
        assert_eq!(
            paths("in runtime/src/server/ (a directory)", &dirs()),
            ["runtime/src/server/"]
        );
    }

    #[test]
    fn protocol_names_prose_and_urls_are_not_paths() {
        let said = "tools/call, notifications/progress, text/event-stream, and/or 1/2; \
                    see https://keepachangelog.com/en/1.1.0/ and <https://x.dev/a/b.md>";
        assert!(
            paths(said, &dirs()).is_empty(),
            "{:?}",
            paths(said, &dirs())
        );
        assert!(paths("mcp_fusion::server::Server, e.g. a 3.5 s wait", &dirs()).is_empty());
    }

    #[test]
    fn a_path_after_another_repository_is_that_repositorys() {
        let said = "modelcontextprotocol/rust-sdk crates/rmcp/src/model.rs, `src/lib.rs`, then \
                    tests/ab.rs";
        assert_eq!(paths(said, &dirs()), ["tests/ab.rs"]);
    }

    #[test]
    fn comments_are_what_follows_two_slashes() {
        assert_eq!(comment("    /// Docs."), Some("/ Docs."));
        assert_eq!(comment("//! Module."), Some("! Module."));
        assert_eq!(comment("let a = 1; // why"), Some("why"));
        assert_eq!(comment("let url = \"https://x\";"), None);
    }

    /// A scratch workspace, removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir =
                std::env::temp_dir().join(format!("xtask-paths-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }

        fn write(&self, path: &str, text: &str) {
            let path = self.0.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn a_missing_path_is_named_with_its_file_and_line() {
        let scratch = Scratch::new("missing");
        scratch.write("runtime/Cargo.toml", "");
        scratch.write("runtime/src/tool/call.rs", "");
        // Written with `c` for the two slashes, so that this file's own check does not read
        // them as comments.
        let c = "/".repeat(2);
        scratch.write(
            "runtime/src/server/mod.rs",
            &format!(
                "{c}! Calls: `tool/call.rs`, its neighbour `call.rs`, `mod.rs`, `../server`.\n\
                 fn f() {{}} {c} once in server/fast.rs\n\
                 {c}/ See runtime/src/tool/gone.rs and `tests/it/main.rs`.\n\
                 const URL: &str = \"https://example.com/x/y.rs\";\n"
            ),
        );
        scratch.write(
            "tests/it/main.rs",
            &format!("{c} Helpers in `support.rs`.\n"),
        );
        scratch.write(
            "README.md",
            "Start at [the server](runtime/src/server/mod.rs).\n",
        );
        let missing = check(&scratch.0).unwrap();
        let found: Vec<(String, usize, &str)> = missing
            .iter()
            .map(|m| (m.file.display().to_string(), m.line, m.path.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                ("runtime/src/server/mod.rs".to_owned(), 2, "server/fast.rs"),
                (
                    "runtime/src/server/mod.rs".to_owned(),
                    3,
                    "runtime/src/tool/gone.rs"
                ),
                ("tests/it/main.rs".to_owned(), 1, "support.rs"),
            ]
        );
        let report = run(&scratch.0).unwrap_err();
        assert!(
            report.contains(
                "runtime/src/server/mod.rs:2: names `server/fast.rs`, which does not exist"
            ),
            "{report}"
        );
        scratch.write("tests/it/support.rs", "");
        scratch.write("runtime/src/server/fast.rs", "");
        scratch.write("runtime/src/tool/gone.rs", "");
        assert_eq!(run(&scratch.0), Ok(()));
    }
}
