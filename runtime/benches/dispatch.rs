//! Workload 4 of `shared/bench/WORKLOADS.md`: a whole `tools/call` through the in-process
//! pipeline (routing, validation, decoding, handler, result), no transport.

use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use mcp_fusion::{Tool, ToolError, tool};
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    #[schemars(length(min = 1))]
    id: String,
    #[schemars(range(min = 1, max = 100))]
    limit: Option<u32>,
}

#[derive(Serialize)]
struct Echo {
    id: String,
    limit: Option<u32>,
}

impl From<Args> for Echo {
    fn from(args: Args) -> Self {
        Echo {
            id: args.id,
            limit: args.limit,
        }
    }
}

struct Bench;

/// Benchmark tool with 20 actions.
#[tool(name = "bench", discriminator = "action")]
impl Bench {
    /// Action op00.
    #[action(read_only)]
    async fn op00(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op01.
    #[action(read_only)]
    async fn op01(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op02.
    #[action(read_only)]
    async fn op02(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op03.
    #[action(read_only)]
    async fn op03(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op04.
    #[action(read_only)]
    async fn op04(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op05.
    #[action(read_only)]
    async fn op05(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op06.
    #[action(read_only)]
    async fn op06(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op07.
    #[action(read_only)]
    async fn op07(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op08.
    #[action(read_only)]
    async fn op08(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op09.
    #[action(read_only)]
    async fn op09(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op10.
    #[action(read_only)]
    async fn op10(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op11.
    #[action(read_only)]
    async fn op11(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op12.
    #[action(read_only)]
    async fn op12(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op13.
    #[action(read_only)]
    async fn op13(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op14.
    #[action(read_only)]
    async fn op14(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op15.
    #[action(read_only)]
    async fn op15(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op16.
    #[action(read_only)]
    async fn op16(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op17.
    #[action(read_only)]
    async fn op17(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op18.
    #[action(read_only)]
    async fn op18(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op19.
    #[action(read_only)]
    async fn op19(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }
}

/// Polls a future once: the handlers await nothing, so it must be ready at once.
fn block_on_ready<F: Future>(future: F) -> F::Output {
    let mut cx = Context::from_waker(Waker::noop());
    match pin!(future).poll(&mut cx) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the call was not ready on its first poll"),
    }
}

fn arguments(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!("the arguments are an object"),
    }
}

fn text(result: &CallToolResult) -> String {
    let json = serde_json::to_value(result).expect("results serialize");
    json["content"]
        .as_array()
        .expect("content is an array")
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn dispatch(c: &mut Criterion) {
    let tool = Bench;
    let ok = arguments(json!({"action": "op07", "id": "item_42", "limit": 10}));
    let unknown = arguments(json!({"action": "op99", "id": "item_42"}));
    let invalid = arguments(json!({"action": "op07", "id": 42, "limit": 500, "extra": true}));

    let call = |args: &Map<String, Value>| block_on_ready(Tool::call(&tool, Some(args.clone())));
    let result = call(&ok);
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(text(&result), r#"{"id":"item_42","limit":10}"#);
    let result = call(&unknown);
    assert_eq!(result.is_error, Some(true));
    assert!(
        text(&result).contains("UNKNOWN_ACTION"),
        "{}",
        text(&result)
    );
    let result = call(&invalid);
    assert_eq!(result.is_error, Some(true));
    let invalid_text = text(&result);
    assert!(invalid_text.contains("<validation_error"), "{invalid_text}");
    let fields = invalid_text
        .lines()
        .filter(|line| line.trim_start().starts_with("<field "))
        .count();
    assert_eq!(fields, 3, "{invalid_text}");

    let mut group = c.benchmark_group("dispatch");
    for (name, args) in [
        ("ok", &ok),
        ("unknown_action", &unknown),
        ("validation_failure", &invalid),
    ] {
        group.bench_function(name, |b| {
            b.iter_batched(
                || Some(args.clone()),
                |a| block_on_ready(Tool::call(black_box(&tool), a)),
                // Small batches: a few inputs and results alive at a time, so the heap does not
                // grow (page faults) inside the timed region, as it would with thousands.
                BatchSize::NumIterations(16),
            )
        });
    }
    group.finish();
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
