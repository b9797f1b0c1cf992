//! Long calls as tasks (the MCP tasks extension, `io.modelcontextprotocol/tasks`, SEP-2663):
//! an action that may run as a task answers a client that declared the extension with a task
//! (`resultType: "task"`), which the client reads with `tasks/get`, answers with
//! `tasks/update` and stops with `tasks/cancel`.
//!
//! Where tasks live is a [`TaskStore`]: [`MemoryTaskStore`] in this process (the default), or
//! a store shared by every replica of a fleet (`RedisTaskStore`, feature `redis`), chosen with
//! [`ServerBuilder::task_store`](crate::server::ServerBuilder::task_store).

mod config;
mod memory;
#[cfg(feature = "redis")]
mod redis;
mod store;

pub(crate) use config::TaskConfig;

pub use memory::{DEFAULT_MAX_TASKS, MemoryTaskStore};
#[cfg(feature = "redis")]
pub use redis::{RedisTaskStore, RedisTaskStoreBuilder};
pub use store::{
    Held, NewTask, ORPHANED, TaskStore, TaskStoreError, TaskUpdate, orphaned_error, timestamp,
};
