//! OpenTelemetry (feature `otel`), through the SDK's in-memory exporters (the real SDK, no
//! mock): a call's span is a server span, child of the client's `traceparent`, named and
//! attributed per the semantic conventions for MCP; its incident id names that span; the
//! duration histogram and the error counter record each call.

use mcp_fusion::Server;
use mcp_fusion::rmcp::ServiceExt;
use mcp_fusion::rmcp::model::{CallToolRequestParams, RequestMetaObject};
use mcp_fusion::{ToolError, tool};
use opentelemetry::trace::{SpanKind, TracerProvider as _};
use opentelemetry::{KeyValue, Value as OtelValue};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt;

struct Ledger;

/// The ledger.
#[tool]
impl Ledger {
    /// Fails unexpectedly.
    async fn broken(&self) -> Result<(), ToolError> {
        Err(ToolError::unexpected("the disk is gone"))
    }

    /// Still works, with a warning.
    #[action(deprecated, replacement = read)]
    async fn old_read(&self) -> Result<u32, ToolError> {
        Ok(1)
    }

    /// Reads.
    async fn read(&self) -> Result<u32, ToolError> {
        Ok(2)
    }
}

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID: &str = "00f067aa0ba902b7";

fn call(action: &str, traced: bool) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new("ledger");
    params.arguments = json!({ "action": action }).as_object().cloned();
    if traced {
        let mut meta = RequestMetaObject::new();
        meta.0
            .set_traceparent(format!("00-{TRACE_ID}-{PARENT_ID}-01"));
        params.meta = Some(meta);
    }
    params
}

fn attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a OtelValue> {
    attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

/// Whether a data point's attributes name `tool`.
fn of_tool<'a>(mut attributes: impl Iterator<Item = &'a KeyValue>, tool: &str) -> bool {
    attributes.any(|kv| kv.key.as_str() == "gen_ai.tool.name" && kv.value.as_str() == tool)
}

fn text(value: Option<&OtelValue>) -> Option<String> {
    value.map(ToString::to_string)
}

#[tokio::test(flavor = "current_thread")]
async fn spans_attributes_and_metrics_follow_the_conventions() {
    let spans = InMemorySpanExporter::default();
    let tracer_provider = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    let subscriber = tracing_subscriber::registry().with(
        tracing_opentelemetry::layer().with_tracer(tracer_provider.tracer("mcp-fusion-tests")),
    );
    let _guard = tracing::subscriber::set_default(subscriber);
    let metrics = InMemoryMetricExporter::default();
    let meter_provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics.clone()).build())
        .build();
    opentelemetry::global::set_meter_provider(meter_provider.clone());

    // The server after the providers: its instruments come from the global meter provider.
    let server = Server::builder("ledger-server", "1")
        .tool(Ledger)
        .build()
        .unwrap();
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(client_io).await.unwrap();

    // A gateway's forwarded call is measured as a call of the name it lists (a namespace no
    // other test mounts: the meter provider is the process's, its tests' calls all recorded).
    let upstream = mcp_fusion_drivers::artifacts::driver("upstream");
    let gateway = Server::builder("gateway", "1")
        .mount(
            "otel",
            mcp_fusion::server::gateway::Upstream::command(upstream.to_string_lossy(), [""; 0]),
        )
        .build()
        .unwrap();
    assert!(gateway.reach_upstreams().await.is_empty());
    let mut echo = CallToolRequestParams::new("otel_echo");
    echo.arguments = json!({"text": "hi"}).as_object().cloned();
    let echoed = gateway.call(echo).await.expect("a listed tool");
    assert_eq!(echoed.is_error, Some(false), "{echoed:?}");

    let failed = client.call_tool(call("broken", true)).await.unwrap();
    let warned = client.call_tool(call("old_read", false)).await.unwrap();
    let fine = client.call_tool(call("read", false)).await.unwrap();
    assert_eq!(
        (failed.is_error, warned.is_error, fine.is_error),
        (Some(true), Some(false), Some(false))
    );
    client.cancel().await.unwrap();
    // A span ends when its call's future is dropped, after the answer: wait for the three.
    let finished = crate::support::eventually("the three calls' spans to end", async || {
        let finished = spans.get_finished_spans().unwrap();
        let ended = finished
            .iter()
            .filter(|s| s.name == "tools/call ledger")
            .count();
        (ended >= 3).then_some(finished)
    })
    .await;
    let calls: Vec<&SpanData> = finished
        .iter()
        .filter(|s| s.name == "tools/call ledger")
        .collect();
    assert_eq!(
        calls.len(),
        3,
        "{:?}",
        finished.iter().map(|s| &s.name).collect::<Vec<_>>()
    );

    assert!(
        finished.iter().any(|s| s.name == "tools/call otel_echo"),
        "the forwarded call's span"
    );

    // The failed call: a server span, child of the client's span in the client's trace.
    let broken = calls
        .iter()
        .find(|s| {
            text(attribute(&s.attributes, "mcp_fusion.action")).as_deref() == Some("ledger.broken")
        })
        .expect("the broken call's span");
    assert_eq!(broken.span_kind, SpanKind::Server);
    assert_eq!(broken.span_context.trace_id().to_string(), TRACE_ID);
    assert_eq!(broken.parent_span_id.to_string(), PARENT_ID);
    assert!(broken.parent_span_is_remote);
    let attributes = &broken.attributes;
    assert_eq!(
        text(attribute(attributes, "mcp.method.name")).as_deref(),
        Some("tools/call")
    );
    assert_eq!(
        text(attribute(attributes, "gen_ai.tool.name")).as_deref(),
        Some("ledger")
    );
    assert_eq!(
        text(attribute(attributes, "error.type")).as_deref(),
        Some("tool_error")
    );
    assert_eq!(
        text(attribute(attributes, "mcp_fusion.error.code")).as_deref(),
        Some("INTERNAL_ERROR")
    );
    // Its incident id is the trace id and this span's own id.
    let envelope = failed.content[0].as_text().unwrap().text.clone();
    let own = format!("{TRACE_ID}-{}", broken.span_context.span_id());
    assert!(
        envelope.contains(&format!("<detail key=\"incident\">{own}</detail>")),
        "{envelope}"
    );

    // The warning: an event, no error.type.
    let old = calls
        .iter()
        .find(|s| {
            text(attribute(&s.attributes, "mcp_fusion.action")).as_deref()
                == Some("ledger.old_read")
        })
        .expect("the deprecated call's span");
    assert!(attribute(&old.attributes, "error.type").is_none());
    let event = old
        .events
        .iter()
        .find(|e| e.name == "mcp_fusion.warning")
        .expect("a warning event");
    assert_eq!(
        text(attribute(&event.attributes, "mcp_fusion.error.code")).as_deref(),
        Some("DEPRECATED")
    );

    // Metrics: three durations, one per call; the errors by code.
    meter_provider.force_flush().unwrap();
    let exported = metrics.get_finished_metrics().unwrap();
    let all: Vec<_> = exported
        .iter()
        .flat_map(|r| r.scope_metrics())
        .flat_map(|s| s.metrics())
        .collect();
    let duration = all
        .iter()
        .find(|m| m.name() == "mcp.server.operation.duration")
        .expect("the duration histogram");
    let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = duration.data() else {
        panic!("a histogram of seconds");
    };
    // Other tests of this process may build servers meanwhile: only this test's tools count.
    let calls_of = |tool: &str, failed_only: bool| -> u64 {
        histogram
            .data_points()
            .filter(|p| of_tool(p.attributes(), tool))
            .filter(|p| !failed_only || p.attributes().any(|kv| kv.key.as_str() == "error.type"))
            .map(|p| p.count())
            .sum()
    };
    assert_eq!(calls_of("ledger", false), 3);
    assert_eq!(calls_of("ledger", true), 1);
    // The gateway's forwarded call.
    assert_eq!(calls_of("otel_echo", false), 1);
    let errors = all
        .iter()
        .find(|m| m.name() == "mcp_fusion.errors")
        .expect("the error counter");
    let AggregatedMetrics::U64(MetricData::Sum(sum)) = errors.data() else {
        panic!("a counter");
    };
    let mut by_code: Vec<(String, u64)> = sum
        .data_points()
        .filter(|p| of_tool(p.attributes(), "ledger"))
        .map(|p| {
            let code = p
                .attributes()
                .find(|kv| kv.key.as_str() == "mcp_fusion.error.code")
                .map(|kv| kv.value.to_string())
                .unwrap_or_default();
            (code, p.value())
        })
        .collect();
    by_code.sort();
    assert_eq!(
        by_code,
        [
            ("DEPRECATED".to_owned(), 1),
            ("INTERNAL_ERROR".to_owned(), 1)
        ]
    );
}
