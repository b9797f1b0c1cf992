//! Workload 4 of `shared/bench/WORKLOADS.md`: a whole `tools/call` through the in-process
//! pipeline (routing, validation, decoding, handler, result), no transport; `dispatch_json` also
//! writes each result as the JSON a transport sends.

use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use mcp_fusion::Tool;
use mcp_fusion::tools::Answer;
use serde_json::{Map, Value, json};

use mcp_fusion_drivers::bench_tool::Bench;

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

fn text(result: &Answer) -> String {
    result.text()
}

fn dispatch(c: &mut Criterion) {
    let tool = Bench;
    let ok = arguments(json!({"action": "op07", "id": "item_42", "limit": 10}));
    let unknown = arguments(json!({"action": "op99", "id": "item_42"}));
    let invalid = arguments(json!({"action": "op07", "id": 42, "limit": 500, "extra": true}));

    let call = |args: &Map<String, Value>| block_on_ready(Tool::call(&tool, Some(args.clone())));
    let result = call(&ok);
    assert!(!result.is_error(), "{}", text(&result));
    assert_eq!(text(&result), r#"{"id":"item_42","limit":10}"#);
    let result = call(&unknown);
    assert!(result.is_error());
    assert!(
        text(&result).contains("UNKNOWN_ACTION"),
        "{}",
        text(&result)
    );
    let result = call(&invalid);
    assert!(result.is_error());
    let invalid_text = text(&result);
    assert!(invalid_text.contains("<validation_error"), "{invalid_text}");
    let fields = invalid_text
        .lines()
        .filter(|line| line.trim_start().starts_with("<field "))
        .count();
    assert_eq!(fields, 3, "{invalid_text}");

    // `dispatch`: a call to its answer; `dispatch_json`: the answer also written as the JSON the
    // transports send (`CallToolResult`, an envelope's `_meta` mirror included).
    for (group, written) in [("dispatch", false), ("dispatch_json", true)] {
        let mut group = c.benchmark_group(group);
        for (name, args) in [
            ("ok", &ok),
            ("unknown_action", &unknown),
            ("validation_failure", &invalid),
        ] {
            group.bench_function(name, |b| {
                b.iter_batched(
                    || Some(args.clone()),
                    |a| {
                        let result = block_on_ready(Tool::call(black_box(&tool), a));
                        let mut out = Vec::new();
                        if written {
                            result.write_json(&mut out);
                        }
                        (result, out)
                    },
                    // Small batches: a few inputs and results alive at a time, so the heap does
                    // not grow (page faults) inside the timed region, as it would with thousands.
                    BatchSize::NumIterations(16),
                )
            });
        }
        group.finish();
    }
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
