//! Workload 4's calls (`benches/dispatch.rs`: the `bench` tool in process, no transport) in a
//! plain loop, for an instruction count that a busy machine does not move:
//!
//! ```text
//! cargo build --release -p mcp-fusion-drivers --bin dispatch_count
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/dispatch_count invalid 2000
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/dispatch_count invalid 12000
//! ```
//!
//! The difference of the two totals over 10,000 is the instructions of one call (its arguments'
//! copy included; `copy` counts that alone). The kinds: `ok`, `unknown` (an action the tool does
//! not have), `invalid` (three problems: a mistyped field, a number too large, an unknown key),
//! `copy`. A third argument, `json`, also writes each result as the JSON the transports send
//! (`Answer::write_json`, as `dispatch_json` in the bench). Criterion's medians remain the
//! figures of time; this one compares two builds of the runtime when the machine's speed
//! changes between runs.

use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use mcp_fusion::Tool;
use mcp_fusion_drivers::bench_tool::Bench;
use serde_json::{Value, json};

type Error = Box<dyn std::error::Error>;

/// Polls a future once: the handlers await nothing, so it must be ready at once.
fn ready<F: Future>(future: F) -> Result<F::Output, Error> {
    match pin!(future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(output) => Ok(output),
        Poll::Pending => Err("the call was not ready on its first poll".into()),
    }
}

fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: dispatch_count ok|unknown|invalid|copy CALLS [json]";
    let kind = args.next().ok_or(usage)?;
    let calls: usize = args.next().ok_or(usage)?.parse()?;
    let json = match args.next().as_deref() {
        None => false,
        Some("json") => true,
        Some(_) => return Err(usage.into()),
    };
    let arguments = match kind.as_str() {
        "ok" | "copy" => json!({"action": "op07", "id": "item_42", "limit": 10}),
        "unknown" => json!({"action": "op99", "id": "item_42"}),
        "invalid" => json!({"action": "op07", "id": 42, "limit": 500, "extra": true}),
        _ => return Err(usage.into()),
    };
    let Value::Object(arguments) = arguments else {
        return Err("the arguments are an object".into());
    };
    let tool = Bench;
    for _ in 0..calls {
        let copy = black_box(arguments.clone());
        if kind != "copy" {
            let result = ready(Tool::call(black_box(&tool), Some(copy)))?;
            if json {
                let mut out = Vec::new();
                result.write_json(&mut out);
                black_box(out);
            } else {
                black_box(result);
            }
        }
    }
    Ok(())
}
