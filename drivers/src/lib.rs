//! What the load, soak and limit drivers (`src/bin/`) share with the integration tests of the
//! workspace (`tests/it/`): one place for the workload code of both.
//!
//! - [`artifacts`]: the binaries they start (the `billing` example, the bench servers), built by
//!   Cargo on demand and found from Cargo's own report of what it built;
//! - [`raw_stdio`] and [`raw_http`]: the billing server as a child process spoken to in raw
//!   JSON-RPC lines or raw HTTP/1.1, for what a typed client never sends;
//! - [`redis_server`]: a `redis-server` of one's own on a free loopback port;
//! - [`issuer`]: an OAuth authorization server of one's own (metadata, keys, signed tokens, its
//!   token, authorization and registration endpoints: `grants`);
//! - [`bench_tool`]: the `bench` tool of workload 4 (`shared/bench/WORKLOADS.md`), and
//!   [`plain`]: the same tool on plain rmcp, the baseline;
//! - [`mix`]: the mixed calls of the soak and HTTP load, each answer judged;
//! - [`measure`]: what the drivers read of a child process (`/proc`) and how they report;
//! - [`accept`]: bare rmcp's accept loop, on which the baseline serves.

pub mod accept;
pub mod artifacts;
pub mod bench_tool;
mod grants;
pub mod issuer;
pub mod measure;
pub mod mix;
pub mod plain;
pub mod raw_http;
pub mod raw_stdio;
pub mod redis_server;
