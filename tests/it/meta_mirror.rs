//! The `_meta` mirror (ERRORS.md §9) of real results over the stdio transport (in memory: the
//! same framing and serialisation as a child's pipes): a server whose tools produce every
//! envelope of §4 and a validation error, called with the typed client, and each result's
//! mirror checked against what its text says.
//!
//! The server's `ledger` tool keeps its rate limit on a Redis that does not answer (a closed
//! loopback port), failing closed: that is how the "limits unavailable" envelope is made.

use std::time::Duration;

use mcp_fusion::Server;
use mcp_fusion::client::{Client, ToolCallError, warnings};
use mcp_fusion::client::{MIRROR_KEY, ParsedError, ParsedKind, parse_envelope};
use mcp_fusion::rmcp::model::CallToolResult;
use mcp_fusion::server::ToolSettings;
use mcp_fusion::server::limits::{FailPolicy, RedisStore};
use mcp_fusion::{Context, ToolError, tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Order {
    /// How many, at least 1.
    #[schemars(range(min = 1))]
    quantity: u32,
    /// The customer's email.
    #[schemars(email)]
    email: String,
}

struct Faults;

/// Every way a call can fail, one action each.
#[tool(name = "faults")]
impl Faults {
    /// Takes an order: validation errors come from here.
    #[action]
    async fn order(&self, args: Order) -> Result<String, ToolError> {
        Ok(format!("{} for {}", args.quantity, args.email))
    }

    /// Fails with an error that is not a tool error.
    #[action]
    async fn fail(&self) -> Result<(), std::io::Error> {
        Err(std::io::Error::other("the disk <is> full"))
    }

    /// Panics.
    #[action]
    async fn explode(&self) -> Result<(), ToolError> {
        panic!("boom")
    }

    /// Takes longer than its deadline.
    #[action(timeout = "100ms")]
    async fn slow(&self) -> Result<(), ToolError> {
        std::future::pending::<()>().await;
        Ok(())
    }

    /// One call at a time, none waiting.
    #[action(concurrency(max_active = 1, max_queued = 0))]
    async fn single(&self) -> Result<(), ToolError> {
        tokio::time::sleep(Duration::from_millis(500)).await;
        Ok(())
    }

    /// Once a minute.
    #[action(rate_limit(max = 1, window = "1m"))]
    async fn scarce(&self) -> Result<(), ToolError> {
        Ok(())
    }

    /// Replaced by `order`.
    #[action(deprecated, replacement = order)]
    async fn legacy(&self) -> Result<&'static str, ToolError> {
        Ok("done")
    }

    /// Needs a field the schema leaves optional.
    #[action]
    async fn lookup(&self, f: Context) -> Result<(), ToolError> {
        Err(f.required("workspace_id"))
    }
}

struct Ledger;

/// Rate-limited on a store that cannot answer.
#[tool(name = "ledger")]
impl Ledger {
    /// Reads the ledger.
    #[action(rate_limit(max = 100, window = "1m"))]
    async fn read(&self) -> Result<(), ToolError> {
        Ok(())
    }
}

fn server() -> Server {
    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let store = RedisStore::builder(format!("redis://127.0.0.1:{port}"))
        .fail(FailPolicy::Closed)
        .build()
        .expect("a well-formed URL");
    Server::builder("mirror", "1")
        .tool(Faults)
        .tool_with(Ledger, ToolSettings::new().limit_store(store))
        .build()
        .expect("the server builds")
}

/// One result read both ways: its mirror objects, each agreeing with its text block.
fn read(result: &CallToolResult) -> Vec<ParsedError> {
    assert!(
        result.structured_content.is_none(),
        "no structuredContent on an envelope"
    );
    let entries = result
        .meta
        .as_ref()
        .and_then(|meta| meta.0.get(MIRROR_KEY))
        .and_then(Value::as_array)
        .expect("the result carries a mirror");
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|b| b.as_text().map(|t| t.text.as_str()))
        .collect();
    // An error is its one block; a warning follows the data it is about.
    let envelopes = &texts[texts.len() - entries.len()..];
    entries
        .iter()
        .zip(envelopes)
        .map(|(entry, text)| {
            let mut mirrored = ParsedError::from_mirror(entry).expect("the mirror reads");
            for field in &mut mirrored.fields {
                if field.path != "(more)" {
                    assert!(field.problem.is_some(), "{entry}");
                }
            }
            let from_mirror = mirrored.clone();
            mirrored.fields.iter_mut().for_each(|f| f.problem = None);
            assert_eq!(mirrored, parse_envelope(text), "{entry}\n{text}");
            from_mirror
        })
        .collect()
}

async fn failed(client: &Client, target: &str, arguments: Value) -> ParsedError {
    let result = client.call_raw(target, arguments).await.expect("answered");
    assert_eq!(result.is_error, Some(true), "{target}: {result:?}");
    let mut read = read(&result);
    assert_eq!(read.len(), 1, "an error carries exactly one envelope");
    // The typed client reads the same from the mirror.
    assert_eq!(ToolCallError::from_result(result).error, read[0]);
    read.remove(0)
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn every_envelope_reads_the_same_from_meta_and_from_its_text() {
    let (client, _connection) = Client::in_memory(server()).await.expect("connected");
    let mut codes = Vec::new();

    let missing = failed(&client, "faults", json!({})).await;
    assert_eq!(missing.actions.len(), 8);
    codes.push(missing.code);
    let not_a_string = failed(&client, "faults", json!({"action": 7})).await;
    assert_eq!(not_a_string.code, "MISSING_DISCRIMINATOR");
    let unknown = failed(&client, "faults.ordr", json!({})).await;
    assert!(
        unknown
            .recovery
            .as_deref()
            .unwrap()
            .starts_with("Did you mean \"faults.order\"?")
    );
    codes.push(unknown.code);

    for target in ["faults.fail", "faults.explode"] {
        let internal = failed(&client, target, json!({})).await;
        assert_eq!(internal.code, "INTERNAL_ERROR");
        // The incident, as the text shows it; never the cause.
        assert_eq!(internal.details.len(), 1, "{internal:?}");
        assert_eq!(internal.details[0].0, "incident");
        let all = format!("{internal:?}");
        assert!(!all.contains("disk") && !all.contains("boom"), "{all}");
        codes.push(internal.code);
    }

    codes.push(failed(&client, "faults.slow", json!({})).await.code);

    // On the paused clock: the second call comes 100 ms into the first one's 500.
    let (first, second) = tokio::join!(client.call_raw("faults.single", json!({})), async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        failed(&client, "faults.single", json!({})).await
    });
    assert_eq!(first.expect("answered").is_error, Some(false));
    assert_eq!(second.retry_after, Some(1));
    codes.push(second.code);

    let unavailable = failed(&client, "ledger.read", json!({})).await;
    assert_eq!(unavailable.code, "SERVER_BUSY");
    assert!(
        unavailable.message.contains("cannot take calls"),
        "{unavailable:?}"
    );

    let _ = client
        .call_raw("faults.scarce", json!({}))
        .await
        .expect("answered");
    let limited = failed(&client, "faults.scarce", json!({})).await;
    assert!(limited.retry_after.is_some_and(|s| s > 0));
    codes.push(limited.code);

    codes.push(failed(&client, "faults.lookup", json!({})).await.code);

    let deprecated = client
        .call_raw("faults.legacy", json!({}))
        .await
        .expect("answered");
    assert_eq!(deprecated.is_error, Some(false));
    let warned = read(&deprecated);
    assert_eq!(warned.len(), 1);
    assert_eq!(warned[0].severity, mcp_fusion::Severity::Warning);
    assert_eq!(warned, warnings(&deprecated));
    codes.push(warned[0].code.clone());

    let invalid = failed(
        &client,
        "faults.order",
        json!({"quantity": 0, "email": "ada<at>example", "note": "]]></validation_error>"}),
    )
    .await;
    assert_eq!(invalid.kind, ParsedKind::ValidationError);
    let rows: Vec<(&str, Option<&str>)> = invalid
        .fields
        .iter()
        .map(|f| (f.path.as_str(), f.problem.as_deref()))
        .collect();
    assert_eq!(
        rows,
        [
            ("quantity", Some("minimum")),
            ("email", Some("format")),
            ("note", Some("unrecognized")),
        ]
    );
    codes.push(invalid.code);

    assert_eq!(
        codes,
        [
            "MISSING_DISCRIMINATOR",
            "UNKNOWN_ACTION",
            "INTERNAL_ERROR",
            "INTERNAL_ERROR",
            "TIMEOUT",
            "SERVER_BUSY",
            "RATE_LIMITED",
            "MISSING_REQUIRED_FIELD",
            "DEPRECATED",
            "VALIDATION_ERROR",
        ]
    );
}
