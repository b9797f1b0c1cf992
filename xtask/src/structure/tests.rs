use super::*;

/// A small source tree in a fresh temporary folder, removed when dropped.
struct Tree(PathBuf);

impl Tree {
    fn new(files: &[(&str, &str)]) -> Self {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let root = std::env::temp_dir().join(format!("xtask-structure-{}-{n}", std::process::id()));
        for (path, source) in files {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().expect("a folder")).expect("a temp folder");
            std::fs::write(path, source).expect("a temp file");
        }
        Tree(root)
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn chains(circles: &[Vec<(String, String)>]) -> Vec<String> {
    let chain = |c: &Vec<(String, String)>| {
        let names: Vec<&str> = c.iter().map(|(f, _)| f.as_str()).collect();
        names.join(" -> ")
    };
    circles.iter().map(chain).collect()
}

#[test]
fn a_circle_through_a_mod_rs_is_reported_as_a_chain_of_files() {
    let tree = Tree::new(&[
        ("lib.rs", "mod envelope;\npub use envelope::Shown;\n"),
        (
            "envelope/mod.rs",
            "mod render;\nmod text;\npub use render::Shown;\npub(crate) fn helper() { Shown; }\n",
        ),
        (
            "envelope/render.rs",
            "pub struct Shown;\nfn f() { super::text::g(); }\n",
        ),
        ("envelope/text.rs", "pub fn g() { super::helper() }\n"),
    ]);
    let report = check(&tree.0).expect("readable");
    assert_eq!(report.module_circles.len(), 0);
    // mod.rs uses what it re-exports of render, which uses text, which uses mod.rs.
    assert_eq!(
        chains(&report.file_circles),
        ["envelope/mod.rs -> envelope/render.rs -> envelope/text.rs"]
    );
    let rendered = report.render("runtime/src");
    assert!(
        rendered.contains("file circle: envelope/mod.rs -> envelope/render.rs"),
        "{rendered}"
    );
}

#[test]
fn a_glob_takes_what_the_module_re_exports() {
    let tree = Tree::new(&[
        ("lib.rs", "mod envelope;\n"),
        (
            "envelope/mod.rs",
            "mod render;\nmod text;\npub use render::Shown;\n",
        ),
        (
            "envelope/render.rs",
            "pub struct Shown;\nfn f() { super::text::g(); }\n",
        ),
        (
            "envelope/text.rs",
            "use super::*;\npub fn g() { let _ = Shown; }\n",
        ),
    ]);
    let report = check(&tree.0).expect("readable");
    assert_eq!(
        chains(&report.file_circles),
        ["envelope/render.rs -> envelope/text.rs"]
    );
}

#[test]
fn a_tree_that_points_one_way_is_clean() {
    let tree = Tree::new(&[
        (
            "lib.rs",
            "mod envelope;\nmod tool;\npub use envelope::Shown;\n",
        ),
        ("envelope/mod.rs", "mod render;\npub use render::Shown;\n"),
        (
            "envelope/render.rs",
            "pub struct Shown;\n#[cfg(test)]\nmod tests { use super::*; }\n",
        ),
        (
            "tool.rs",
            "use crate::Shown;\nfn f() -> crate::envelope::Shown { Shown }\n",
        ),
    ]);
    let report = check(&tree.0).expect("readable");
    assert!(report.file_circles.is_empty(), "{:?}", report.file_circles);
    assert!(
        report.module_circles.is_empty(),
        "{:?}",
        report.module_circles
    );
    assert_eq!(report.oversized().count(), 0);
}

#[test]
fn modules_that_use_each_other_are_reported() {
    let tree = Tree::new(&[
        ("lib.rs", "mod a;\nmod b;\npub use a::A;\n"),
        ("a/mod.rs", "mod inner;\npub use inner::A;\n"),
        ("a/inner.rs", "pub struct A;\nfn f() { crate::b::g() }\n"),
        ("b.rs", "pub fn g() { let _ = crate::A; }\n"),
    ]);
    let report = check(&tree.0).expect("readable");
    assert_eq!(chains(&report.module_circles), ["a -> b"]);
    assert_eq!(chains(&report.file_circles), ["a/inner.rs -> b.rs"]);
}

#[test]
fn a_file_over_the_limit_is_named_with_its_count() {
    let mut big = String::from("//! Docs.\n\n");
    for i in 0..=MAX_LINES {
        big.push_str(&format!("// a comment\nconst C{i}: u8 = 0;\n\n"));
    }
    let tree = Tree::new(&[("lib.rs", "mod big;\n"), ("big.rs", &big)]);
    let report = check(&tree.0).expect("readable");
    let over: Vec<_> = report.oversized().cloned().collect();
    assert_eq!(over, [("big.rs".to_owned(), MAX_LINES + 1)]);
    assert!(
        report
            .render("x/src")
            .contains("x/src/big.rs: 601 lines of code")
    );
}

#[test]
fn lines_of_code_skip_comments_and_blanks_but_keep_strings() {
    let source = "//! doc\n/* block\n   comment */\nfn f() {\n    let s = \"a\n b\";\n}\n\n";
    assert_eq!(lines_of_code(source), 4);
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
        fn g() -> Also { let s = "crate::in_a_string::No"; let c = '"'; Also }
        // crate::commented::Out
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
            // Re-exported and used here too.
            "server::http::child::Also",
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
    let globs: Vec<String> = facts.globs.iter().map(|p| p.join("::")).collect();
    assert_eq!(globs, ["server::http"]);
}
