//! The integration tests, one binary with a module per behaviour: `cargo test <module>` runs
//! one group (`cargo test stdio_serving`), `cargo test <name>` one test. Tests that start the
//! `billing` example have Cargo build it first (`mcp_fusion_drivers::artifacts`), so any of
//! them runs alone on a clean target.
//!
//! Two behaviours have binaries of their own: `tests/conformance.rs` (the golden vectors, with
//! a report per case) and `tests/bounds.rs` (memory, which needs its own global allocator).
//! The macros' compile-time diagnostics are `macros/tests/ui.rs`.

mod hostile_upstream;
mod support;

mod answers;
mod cancellation;
mod client;
mod client_eras;
mod client_gateway;
mod composition;
mod custom_headers;
mod decoding;
mod derive_tool_errors;
mod envelope_properties;
mod everything_example;
mod exposition;
mod fast_path;
mod fixing_calls;
mod gateway;
mod gateway_relays;
mod grouping_properties;
mod hand_written_tool;
mod handler_faults;
mod held_requests;
mod hostile_corpus;
mod http_serving;
mod library_face;
mod lockfile;
mod macro_crate_path;
mod macro_elicit_form;
mod macro_hygiene;
mod meta_mirror;
mod oauth;
mod oauth_client;
mod observability;
mod otel;
mod output_schema;
mod readme_quick_start;
mod redis_failover;
mod redis_limits;
mod redis_tasks;
mod rounds;
mod schema_2020_12;
mod schema_fidelity;
mod sdk2_client;
mod server_pipeline;
mod stdio_envelopes;
mod stdio_serving;
mod subscriptions;
mod tasks;
mod tool_routing;
mod transports;
mod user_fields;
mod vector_edges;
