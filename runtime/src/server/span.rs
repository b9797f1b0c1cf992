//! The span of one `tools/call` (target `mcp_fusion`): its tool and action, the verified
//! caller's subject (`enduser.id`, never its token), and when the client sent a trace context,
//! its `trace_id`, the caller's `parent_span_id` and the server's own `span_id`; with the
//! `otel` feature, an OpenTelemetry server span named and attributed per the semantic
//! conventions for MCP.

use rmcp::model::Extensions;

use crate::tool::{Caller, TraceContext};

/// Opens the span of a call of `tool_name`. With OpenTelemetry recording, the span's id is the
/// call's own, which `trace` then carries (its incident ids name a span an exporter has).
pub(crate) fn open(
    tool_name: &str,
    extensions: &Extensions,
    trace: &mut Option<(TraceContext, String)>,
) -> tracing::Span {
    #[cfg(not(feature = "otel"))]
    let span = call_span!(tool_name);
    // The OpenTelemetry name and attributes of the semantic conventions for MCP.
    #[cfg(feature = "otel")]
    let span = call_span!(
        tool_name,
        otel.name = %format_args!("tools/call {tool_name}"),
        otel.kind = "server",
        mcp.method.name = "tools/call",
        gen_ai.tool.name = %tool_name,
    );
    #[cfg(feature = "otel")]
    if let (Some(own), Some((_, span_id))) = (
        super::otel::start(&span, trace.as_ref().map(|(trace, _)| trace)),
        trace.as_mut(),
    ) {
        *span_id = own;
    }
    if let Some(caller) = Caller::of(extensions) {
        span.record("enduser.id", caller.subject());
    }
    if let Some((trace, span_id)) = trace {
        span.record("trace_id", tracing::field::display(trace.trace_id()));
        span.record("parent_span_id", tracing::field::display(trace.parent_id()));
        span.record("span_id", tracing::field::display(span_id));
    }
    span
}

/// The span of one `tools/call`: its tool, and the fields recorded once known; `tracing`'s
/// macros take no `cfg` per field, so a feature adds its own fields through `$extra`.
macro_rules! call_span {
    ($tool:expr $(, $($extra:tt)*)?) => {
        tracing::info_span!(
            target: "mcp_fusion",
            "tools/call",
            $($($extra)*)?
            tool = %$tool,
            action = tracing::field::Empty,
            trace_id = tracing::field::Empty,
            parent_span_id = tracing::field::Empty,
            span_id = tracing::field::Empty,
            enduser.id = tracing::field::Empty,
            upstream = tracing::field::Empty,
        )
    };
}
use call_span;
