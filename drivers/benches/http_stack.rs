//! What the HTTP stack costs beside rmcp's own service, in process (no sockets, no kernel):
//! one stateless JSON request through the whole stack (`Server::http_service`, its fast lane
//! off, so every request takes rmcp's path) against the same request handed to rmcp's
//! `StreamableHttpService` serving the same `Server` with the same settings.
//!
//! ```text
//! cargo bench -p mcp-fusion-drivers --bench http_stack
//! ```
//!
//! `http_stack/<request>/plain` is rmcp's service serving the same tool by hand
//! (`mcp_fusion_drivers::plain`, the `load` driver's baseline); `rmcp` is rmcp's service
//! serving our `Server`; `stack` the whole stack; `lane` the whole stack with its fast lane on
//! (the requests it answers itself). `rmcp` − `plain` is what our handler adds to a request
//! that takes rmcp's path, `stack` − `rmcp` what our endpoint adds.

use std::hint::black_box;
use std::sync::Arc;

use bytes::Bytes;
use criterion::{Criterion, criterion_group, criterion_main};
use http_body_util::{BodyExt, Full};
use mcp_fusion::Server;
use mcp_fusion::rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use mcp_fusion::rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService,
};
use mcp_fusion::server::HttpOptions;
use tower::{Service, ServiceExt};

use mcp_fusion_drivers::bench_tool::Bench;
use mcp_fusion_drivers::plain::Plain;

/// The requests: a call answered, a call refused by validation, a ping.
const REQUESTS: [(&str, &str, &str); 3] = [
    (
        "call_ok",
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bench","arguments":{"action":"op07","id":"item_42","limit":10}}}"#,
        "item_42",
    ),
    (
        "call_invalid",
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bench","arguments":{"action":"op07","id":42,"limit":500,"extra":true}}}"#,
        "validation_error",
    ),
    (
        "ping",
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        r#""result":{}"#,
    ),
];

/// A POST of `body` as a client of 2025-06-18 sends it to a stateless server.
fn post(body: &'static str) -> http::Request<Full<Bytes>> {
    http::Request::post("http://127.0.0.1/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .body(Full::new(Bytes::from_static(body.as_bytes())))
        .expect("a request")
}

/// The body of an answer, whole.
async fn answer<B>(response: http::Response<B>) -> Bytes
where
    B: http_body::Body<Data = Bytes>,
    B::Error: std::fmt::Debug,
{
    let body = response.into_body().collect().await.expect("a body");
    body.to_bytes()
}

fn http_stack(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let server = Server::builder("bench-server", "1")
        .tool(Bench)
        .build()
        .expect("a server");
    let options = |fast_path| {
        let mut options = HttpOptions::default();
        options.stateless = true;
        options.fast_path = fast_path;
        options
    };
    // rmcp's service as the stack configures it for a stateless server.
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options(false).allowed_hosts.clone())
        .with_allowed_origins(options(false).allowed_origins.clone())
        .enforce_origin_validation()
        .with_legacy_session_mode(false)
        .with_json_response(true);
    let served = server.clone();
    let rmcp = Arc::new(StreamableHttpService::new(
        move || Ok(served.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    ));
    let plain = Arc::new(StreamableHttpService::new(
        || Ok(Plain::new()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true),
    ));
    let (stack, lane) = runtime.block_on(async {
        (
            server.http_service(options(false)),
            server.http_service(options(true)),
        )
    });

    let mut group = c.benchmark_group("http_stack");
    for (name, body, expected) in REQUESTS {
        // Each way answers alike before it is timed.
        let answers = runtime.block_on(async {
            [
                answer(plain.handle(post(body)).await).await,
                answer(rmcp.handle(post(body)).await).await,
                answer(stack.clone().oneshot(post(body)).await.expect("infallible")).await,
                answer(lane.clone().oneshot(post(body)).await.expect("infallible")).await,
            ]
        });
        for answer in &answers[1..] {
            let text = String::from_utf8_lossy(answer);
            assert!(text.contains(expected), "{name}: {text}");
        }
        group.bench_function(format!("{name}/plain"), |b| {
            b.iter(|| {
                runtime.block_on(async { black_box(answer(plain.handle(post(body)).await).await) })
            })
        });
        group.bench_function(format!("{name}/rmcp"), |b| {
            b.iter(|| {
                runtime.block_on(async { black_box(answer(rmcp.handle(post(body)).await).await) })
            })
        });
        group.bench_function(format!("{name}/stack"), |b| {
            let mut stack = stack.clone();
            b.iter(|| {
                runtime.block_on(async {
                    let reply = stack.call(post(body)).await.expect("infallible");
                    black_box(answer(reply).await)
                })
            })
        });
        group.bench_function(format!("{name}/lane"), |b| {
            let mut lane = lane.clone();
            b.iter(|| {
                runtime.block_on(async {
                    let reply = lane.call(post(body)).await.expect("infallible");
                    black_box(answer(reply).await)
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, http_stack);
criterion_main!(benches);
