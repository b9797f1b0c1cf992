//! The README's quick start, as a stranger uses it: its `Cargo.toml` dependencies and its
//! `src/main.rs`, copied into a fresh crate (depending on this runtime by path), built, then
//! started and called over stdio by the typed client.
//!
//! The crate lives in Cargo's test scratch space (`target/tmp`) but builds into the workspace's
//! target folder, with the workspace's `Cargo.lock` copied in: what it shares with the
//! workspace (the same versions with the same features) is compiled once for both, and only
//! its stdio-only tree (no HTTP stack) is its own.

use std::path::{Path, PathBuf};

use mcp_fusion::client::{Client, ClientError};
use mcp_fusion_drivers::artifacts;
use serde_json::json;

/// The first code block of `language` after the `## Quick start` heading.
fn block<'a>(readme: &'a str, language: &str) -> &'a str {
    let section = &readme[readme
        .find("## Quick start")
        .expect("a quick start section")..];
    let open = format!("```{language}\n");
    let start = section.find(&open).expect("the block") + open.len();
    let end = start + section[start..].find("\n```").expect("the block's end");
    &section[start..end]
}

fn write_crate(root: &Path, dir: &Path) {
    let readme = std::fs::read_to_string(root.join("runtime/README.md")).expect("the crate README");
    let dependencies = block(&readme, "toml");
    let runtime = root.join("runtime");
    let local = dependencies.replacen(
        "mcp-fusion = { version = \"0.1\",",
        &format!(
            "mcp-fusion = {{ path = {:?},",
            runtime.display().to_string()
        ),
        1,
    );
    assert_ne!(local, dependencies, "the quick start names mcp-fusion 0.1");
    let manifest = format!(
        "[package]\nname = \"quick-start\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
         [workspace]\n\n{local}\n"
    );
    std::fs::create_dir_all(dir.join("src")).expect("a scratch folder");
    std::fs::write(dir.join("Cargo.toml"), manifest).expect("the manifest");
    std::fs::write(
        dir.join("src/main.rs"),
        block(&readme, "rust,no_run").to_owned() + "\n",
    )
    .expect("main.rs");
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).expect("the lockfile");
}

fn build(dir: &Path) -> PathBuf {
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let target = scratch.parent().expect("the scratch space is target/tmp");
    let mut build = artifacts::cargo();
    build
        .args(["build", "--quiet"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target);
    artifacts::executable(build, "quick-start")
        .unwrap_or_else(|e| panic!("the quick start does not build: {e}"))
}

#[tokio::test(flavor = "current_thread")]
async fn the_readme_quick_start_builds_and_answers_over_stdio() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("quick-start");
    write_crate(&root, &dir);
    let binary = build(&dir);

    let mut command = tokio::process::Command::new(&binary);
    command.stderr(std::process::Stdio::null());
    let (client, _connection) = Client::spawn(command).await.expect("the server starts");
    let tools = client.list_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "hello");

    let hello: String = client
        .call_as("hello.greet", json!({"name": "Ada"}))
        .await
        .expect("a greeting");
    assert_eq!(hello, "Hello, Ada!");

    // A misspelt field is refused with the envelope the model reads.
    match client.call("hello.greet", json!({"nmae": "Ada"})).await {
        Err(ClientError::Tool(err)) => {
            assert_eq!(err.code(), "VALIDATION_ERROR");
            let fields: Vec<&str> = err.error.fields.iter().map(|f| f.path.as_str()).collect();
            assert_eq!(fields, ["name", "nmae"]);
        }
        other => panic!("expected a validation error, got {other:?}"),
    }
    match client.call("hello.greet", json!({"name": "nobody"})).await {
        Err(ClientError::Tool(err)) => assert_eq!(err.code(), "NOT_FOUND"),
        other => panic!("expected NOT_FOUND, got {other:?}"),
    }
}
