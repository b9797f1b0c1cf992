//! Workload 5 of `shared/bench/WORKLOADS.md`: the server under load, built with this library.
//!
//! On stdio: the `bench` tool of workload 4 (20 actions `op00` … `op19`, each echoing
//! `{"id", "limit"}`), the `users` tool of workload 3 (action `create`), the `confirm` tool
//! (action `item`: asks the user to confirm an item, a 2026-07-28 round whose answer comes back
//! in the retried call, as `mcp_fusion_drivers::plain::Plain` does by hand), and the prompt and
//! resource of `mcp_fusion_drivers::plain::Documents` (served by `ServerBuilder::handler`). No
//! logging, a single-threaded runtime. Driven by the `load` driver, which builds it.
//!
//! `--http` serves stateless streamable HTTP at a free loopback port (its URL printed on
//! stdout), with `--sessions` streamable HTTP with sessions (`serve_http`'s default);
//! over HTTP, `--rmcp-service` serves the server on rmcp's streamable HTTP service alone (none
//! of this library's endpoint) and `--mounted` serves `Server::http_service`, each on the plain
//! baseline's accept loop (`mcp_fusion_drivers::accept`), to tell what the HTTP endpoint costs
//! from what the server's handler and the accept loop do;
//! `--no-fast-path` serves stdio with every message through rmcp
//! (`StdioOptions::fast_path`). `--pipes` serves on `rmcp::transport::stdio_pipes()` explicitly, which is also what
//! `Server::serve_stdio` uses (non-blocking pipes on Linux),
//! so the driver can tell the library's cost from the transport's. `--otel` records every
//! call as an OpenTelemetry span and in the metrics, exported to the SDK's in-memory exporters
//! (the cost of the `otel` feature with a real SDK, without an exporter's network).

use mcp_fusion::Server;
use mcp_fusion::rmcp::ServiceExt;
use mcp_fusion::server::{HttpOptions, StdioOptions};
use mcp_fusion::tools::ElicitForm;
use mcp_fusion::{Context, ToolError, tool};
use mcp_fusion_drivers::bench_tool::Bench;
use mcp_fusion_drivers::plain::Documents;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Kept alive while serving: the providers export as long as they live.
    let _telemetry = std::env::args().any(|a| a == "--otel").then(telemetry);
    let server = Server::builder("bench-server", env!("CARGO_PKG_VERSION"))
        .tool(Bench)
        .tool(Users)
        .tool(Confirm)
        // The prompt and resource plain rmcp's server offers too.
        .handler(Documents)
        .build()?;
    if std::env::args().any(|a| a == "--http") {
        // Stateless streamable HTTP (answers as JSON), or with sessions (`--sessions`), at a
        // free loopback port, printed on stdout.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        println!("http://{}/mcp", listener.local_addr()?);
        let mut options = HttpOptions::default();
        options.stateless = !std::env::args().any(|a| a == "--sessions");
        options.fast_path = !std::env::args().any(|a| a == "--no-fast-path");
        if std::env::args().any(|a| a == "--rmcp-service") {
            let sessions = !options.stateless;
            return Ok(mcp_fusion_drivers::accept::serve_rmcp(listener, server, sessions).await?);
        }
        if std::env::args().any(|a| a == "--mounted") {
            let service = server.http_service(options);
            let handle = hyper::service::service_fn(move |request| {
                tower_service::Service::call(&mut service.clone(), request)
            });
            return Ok(mcp_fusion_drivers::accept::serve(listener, handle).await?);
        }
        server.serve_http(listener, options).await?;
    } else if std::env::args().any(|a| a == "--pipes") {
        let running = server
            .serve(mcp_fusion::rmcp::transport::stdio_pipes())
            .await?;
        running.waiting().await?;
    } else {
        let mut options = StdioOptions::default();
        options.fast_path = !std::env::args().any(|a| a == "--no-fast-path");
        server.serve_stdio(options).await?;
    }
    Ok(())
}

/// OpenTelemetry to in-memory exporters: spans through the `tracing` layer, metrics read
/// every second.
fn telemetry() -> (
    opentelemetry_sdk::trace::SdkTracerProvider,
    opentelemetry_sdk::metrics::SdkMeterProvider,
) {
    use opentelemetry::trace::TracerProvider as _;
    use tracing_subscriber::layer::SubscriberExt;

    let spans = opentelemetry_sdk::trace::InMemorySpanExporter::default();
    let tracer = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_simple_exporter(spans)
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(tracer.tracer("bench-server")));
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
    let metrics = opentelemetry_sdk::metrics::InMemoryMetricExporter::default();
    let reader = opentelemetry_sdk::metrics::PeriodicReader::builder(metrics)
        .with_interval(std::time::Duration::from_secs(1))
        .build();
    let meter = opentelemetry_sdk::metrics::SdkMeterProvider::builder()
        .with_reader(reader)
        .build();
    opentelemetry::global::set_meter_provider(meter.clone());
    (tracer, meter)
}

// ---- workload 3: `users` ----

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Role {
    Admin,
    Editor,
    Viewer,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Address {
    #[schemars(length(min = 1))]
    street: String,
    #[schemars(length(min = 1))]
    city: String,
    #[schemars(regex(pattern = r"^[0-9]{5}$"))]
    zip: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateUser {
    #[schemars(email)]
    email: String,
    #[schemars(range(min = 18, max = 120))]
    age: u32,
    role: Role,
    address: Address,
    #[schemars(length(max = 10))]
    tags: Vec<String>,
    #[schemars(length(min = 1, max = 100))]
    name: String,
}

struct Users;

/// Users of the benchmark.
#[tool(name = "users")]
impl Users {
    /// Creates a user and returns it.
    async fn create(&self, args: CreateUser) -> Result<CreateUser, ToolError> {
        Ok(args)
    }
}

// ---- a round: `confirm` ----

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Item {
    #[schemars(length(min = 1))]
    id: String,
}

/// What the user is asked.
#[derive(Deserialize, ElicitForm)]
struct Confirmation {
    /// Whether to go ahead.
    confirm: bool,
}

struct Confirm;

/// Items confirmed by the user.
#[tool(name = "confirm")]
impl Confirm {
    /// Asks the user to confirm an item, and says what they answered.
    async fn item(&self, args: Item, f: Context) -> Result<String, ToolError> {
        let message = format!("Go ahead with {}?", args.id);
        let answer = f.elicit::<Confirmation>(message).await?.accepted()?;
        Ok(format!("{} confirmed: {}", args.id, answer.confirm))
    }
}
