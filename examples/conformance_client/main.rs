//! The conformance suite's client: `conformance_client <url>`, the scenario named by
//! `MCP_CONFORMANCE_SCENARIO` (and `MCP_CONFORMANCE_CONTEXT` for some). This one routes only
//! the `auth/*` scenarios (`auth.rs`).

mod auth;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let url = std::env::args().nth(1).unwrap_or_default();
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok());
    let ran = match scenario.starts_with("auth/") {
        true => auth::run(&scenario, &url, context).await,
        false => Err(format!("{scenario}: not an auth scenario").into()),
    };
    match ran {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{scenario}: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
