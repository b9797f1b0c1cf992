//! OpenTelemetry (feature `otel`): each `tools/call` span as a server span, child of the
//! client's trace, named and attributed per the OpenTelemetry semantic conventions for MCP
//! (`{mcp.method.name} {gen_ai.tool.name}`, `mcp.method.name`, `gen_ai.tool.name`, `error.type`
//! = `tool_error` when the result has `isError`), with `mcp_fusion.action` and
//! `mcp_fusion.error.code` (a warning's code as an event); and two instruments:
//! `mcp.server.operation.duration` (seconds) and `mcp_fusion.errors` (envelopes by code).
//!
//! Spans reach OpenTelemetry through `tracing-opentelemetry`'s layer in the application's
//! subscriber, metrics through the global meter provider, both the application's to set up
//! (before the server is built, for the instruments): no exporter is chosen here.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use opentelemetry::metrics::{Counter, Histogram};
use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use opentelemetry::{KeyValue, StringValue};
use tracing_opentelemetry::OpenTelemetrySpanExt;

use crate::tool::TraceContext;

/// The instruments of one server.
pub(crate) struct Instruments {
    duration: Histogram<f64>,
    errors: Counter<u64>,
}

impl Instruments {
    pub(crate) fn new() -> Self {
        let meter = opentelemetry::global::meter("mcp-fusion");
        Instruments {
            duration: meter
                .f64_histogram("mcp.server.operation.duration")
                .with_unit("s")
                .with_description("The duration of MCP requests handled by the server.")
                .build(),
            errors: meter
                .u64_counter("mcp_fusion.errors")
                .with_description("Error and warning envelopes answered, by code.")
                .build(),
        }
    }
}

impl std::fmt::Debug for Instruments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instruments").finish_non_exhaustive()
    }
}

/// Makes the call's span a child of the client's trace. The span's own id when OpenTelemetry
/// records it (the incident id then names a span an exporter has), else `None`.
pub(crate) fn start(span: &tracing::Span, trace: Option<&TraceContext>) -> Option<String> {
    if let Some(trace) = trace {
        let (Ok(trace_id), Ok(parent)) = (
            TraceId::from_hex(trace.trace_id()),
            SpanId::from_hex(trace.parent_id()),
        ) else {
            return None;
        };
        let flags = if trace.sampled() {
            TraceFlags::SAMPLED
        } else {
            TraceFlags::default()
        };
        let state = trace
            .state()
            .and_then(|s| s.parse::<TraceState>().ok())
            .unwrap_or_default();
        let remote = SpanContext::new(trace_id, parent, flags, true, state);
        let parent = opentelemetry::Context::new().with_remote_span_context(remote);
        let _ = span.set_parent(parent);
    }
    let context = span.context();
    let own = context.span().span_context().clone();
    own.is_valid().then(|| own.span_id().to_string())
}

/// Records the call's outcome on its span and in the instruments. The tool's name and the
/// action reach OpenTelemetry shared (a static name as it is), the attributes on the stack: a
/// call allocates nothing here unless its answer has a code.
pub(crate) fn finish(
    instruments: &Instruments,
    span: &tracing::Span,
    tool: Cow<'static, str>,
    action: Option<&Arc<str>>,
    result: &crate::tool::Answer,
    elapsed: Duration,
) {
    let failed = result.is_error();
    let tool = KeyValue::new("gen_ai.tool.name", StringValue::from(tool));
    if let Some(action) = action {
        span.set_attribute("mcp_fusion.action", StringValue::from(Arc::clone(action)));
    }
    if failed {
        span.set_attribute("error.type", "tool_error");
        span.set_status(opentelemetry::trace::Status::error("tool_error"));
    }
    if let Some((code, warning)) = result.code() {
        let code = code.to_owned();
        if warning {
            span.add_event(
                "mcp_fusion.warning",
                vec![KeyValue::new("mcp_fusion.error.code", code.clone())],
            );
        } else {
            span.set_attribute("mcp_fusion.error.code", code.clone());
        }
        let severity = if warning { "warning" } else { "error" };
        instruments.errors.add(
            1,
            &[
                tool.clone(),
                KeyValue::new("mcp_fusion.error.code", code),
                KeyValue::new("mcp_fusion.severity", severity),
            ],
        );
    }
    let attributes = [
        KeyValue::new("mcp.method.name", "tools/call"),
        tool,
        KeyValue::new("error.type", "tool_error"),
    ];
    let recorded = if failed {
        &attributes[..]
    } else {
        &attributes[..2]
    };
    instruments.duration.record(elapsed.as_secs_f64(), recorded);
}
