//! What the store's operations share: the connection and settings, the timeout and the
//! outage log, the names, and how a task read from Redis becomes the task `tasks/get` answers.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, UNIX_EPOCH};

use redis::Script;
use rmcp::model::{DetailedTask, JsonObject, Task, TaskPayload, TaskStatus};
use tokio::sync::Notify;

use super::super::super::limits::redis::connection::Connection;
use super::super::super::limits::redis::shared::is_outage;
use super::super::store::{Held, ORPHANED, TaskStoreError, orphaned_error, timestamp};
use super::keys::{self, TaskKeys};

/// The state of one store, shared with the task that hears changed tasks (which holds it
/// weakly, so the store stops it when dropped).
pub(super) struct Inner {
    pub(super) connection: Connection,
    pub(super) prefix: String,
    pub(super) key_secret: Option<Box<[u8]>>,
    pub(super) timeout: Duration,
    /// How many tasks the store holds at most.
    pub(super) max_tasks: usize,
    /// Whether the last operation failed: an outage is logged when it starts and ends.
    pub(super) down: AtomicBool,
    /// Whether a caller's key came without a secret to hash it under (said once).
    pub(super) unkeyed_said: AtomicBool,
    /// Who to wake when a task running here is answered or cancelled, by the task's hash.
    pub(super) running: Mutex<HashMap<String, Arc<Changes>>>,
    /// The task that hears changed tasks, started by the first wait for one.
    pub(super) listener: OnceLock<tokio::task::JoinHandle<()>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(task) = self.listener.get() {
            task.abort();
        }
    }
}

impl Inner {
    pub(super) fn lock_running(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Changes>>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The channel changed tasks are announced on.
    pub(super) fn channel(&self) -> String {
        format!("{}:tasks:changed", self.prefix)
    }

    pub(super) fn keys(&self, id: &str) -> TaskKeys {
        TaskKeys::new(&self.prefix, id)
    }

    /// Runs `script` on a task's keys with the orphaned error and message first, then `args`.
    pub(super) async fn on_task<T: redis::FromRedisValue>(
        &self,
        script: &Script,
        keys: &TaskKeys,
        args: impl redis::ToRedisArgs,
    ) -> Result<T, TaskStoreError> {
        let mut invocation = script.prepare_invoke();
        invocation
            .key(&keys.main)
            .key(&keys.questions)
            .key(&keys.answers)
            .arg(orphaned())
            .arg(ORPHANED)
            .arg(args);
        self.within(self.connection.invoke(&invocation)).await
    }

    /// The reply, if it comes within the timeout; an outage logged when it starts and ends.
    pub(super) async fn within<T>(
        &self,
        reply: impl Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, TaskStoreError> {
        let reply = tokio::time::timeout(self.timeout, reply).await;
        let error = match reply {
            Ok(Ok(answer)) => {
                if self.down.swap(false, Ordering::AcqRel) {
                    tracing::info!(prefix = %self.prefix, "the Redis task store answers again");
                }
                return Ok(answer);
            }
            Ok(Err(error)) if !is_outage(&error) => {
                tracing::error!(
                    prefix = %self.prefix,
                    %error,
                    "a Redis task script failed: a bug (of mcp-fusion, or of another program \
                     writing under the prefix), not an outage"
                );
                return Err(unavailable(format!("a task script failed: {error}")));
            }
            Ok(Err(error)) => error.to_string(),
            Err(_) => "no answer within the timeout".to_owned(),
        };
        if !self.down.swap(true, Ordering::AcqRel) {
            tracing::error!(
                prefix = %self.prefix,
                %error,
                "the Redis task store cannot answer: tasks cannot be created, read, answered \
                 or cancelled until it does"
            );
        }
        Err(unavailable(error))
    }

    /// The key of `caller`'s count of tasks, or why it has none.
    pub(super) fn count_key(&self, caller: Option<&str>) -> Result<String, TaskStoreError> {
        if let Some(key) = keys::caller_count(&self.prefix, self.key_secret.as_deref(), caller) {
            return Ok(key);
        }
        if !self.unkeyed_said.swap(true, Ordering::Relaxed) {
            tracing::error!(
                prefix = %self.prefix,
                "an identified caller reached a Redis task store without a key secret, which \
                 never stores caller keys: its tasks are refused; set \
                 RedisTaskStoreBuilder::key_secret"
            );
        }
        Err(unavailable(
            "a caller's key reached a Redis task store without a key secret".to_owned(),
        ))
    }
}

pub(super) fn unavailable(reason: String) -> TaskStoreError {
    TaskStoreError::Unavailable { reason }
}

/// The orphaned error as JSON, as the scripts write it.
pub(super) fn orphaned() -> String {
    serde_json::Value::Object(orphaned_error()).to_string()
}

pub(super) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// A task as `GET` returns it: status, created, updated, ttl, poll interval, message, result
/// or error, pending questions (flat pairs).
pub(super) type Read = (
    String,
    u64,
    u64,
    u64,
    u64,
    Option<String>,
    Option<String>,
    Vec<String>,
);

/// The task `id` as `tasks/get` answers it, from what `GET` returned.
pub(super) fn detailed(id: &str, read: Read) -> Result<DetailedTask, TaskStoreError> {
    let (status, created, updated, ttl, poll, message, outcome, questions) = read;
    let at = |ms: u64| timestamp(UNIX_EPOCH + Duration::from_millis(ms));
    let json = |text: Option<String>| -> Result<JsonObject, TaskStoreError> {
        serde_json::from_str(text.as_deref().unwrap_or("{}"))
            .map_err(|e| unavailable(format!("a task's stored result is no JSON object: {e}")))
    };
    let payload = match status.as_str() {
        "working" if questions.is_empty() => TaskPayload::Working,
        "working" => {
            let mut input_requests = BTreeMap::new();
            for pair in questions.chunks_exact(2) {
                let request = serde_json::from_str(&pair[1])
                    .map_err(|e| unavailable(format!("a task's stored question: {e}")))?;
                input_requests.insert(pair[0].clone(), request);
            }
            TaskPayload::InputRequired { input_requests }
        }
        "completed" => TaskPayload::Completed {
            result: json(outcome)?,
        },
        "failed" => TaskPayload::Failed {
            error: json(outcome)?,
        },
        "cancelled" => TaskPayload::Cancelled,
        other => return Err(unavailable(format!("a task's stored status {other:?}"))),
    };
    let mut task = Task::new(id, TaskStatus::Working, at(created), at(updated))
        .with_ttl_ms(ttl)
        .with_poll_interval_ms(poll);
    task.status_message = message;
    Ok(DetailedTask::new(task, payload))
}

/// What a running side's script answered: 0 running, 1 cancelled, else gone.
pub(super) fn held(code: i64) -> Held {
    match code {
        0 => Held::Running,
        1 => Held::Cancelled,
        _ => Held::Gone,
    }
}

/// The changes heard of one task running here: counted, so that every wait begun before one
/// ends (the lease keeper's and the one for answers alike).
#[derive(Default)]
pub(super) struct Changes {
    heard: AtomicU64,
    notify: Notify,
}

impl Changes {
    /// Counts a change and wakes every wait.
    pub(super) fn heard(&self) {
        self.heard.fetch_add(1, Ordering::AcqRel);
        self.notify.notify_waiters();
    }
}

/// A wait for a task running here to change, begun when made: ends at the first change heard
/// since, or after `POLL`. Forgets the task's changes when the last wait ends.
pub(super) struct Waiting {
    inner: Arc<Inner>,
    hash: String,
    changes: Arc<Changes>,
    since: u64,
    until: tokio::time::Instant,
}

impl Waiting {
    pub(super) fn begin(inner: Arc<Inner>, hash: String, poll: Duration) -> Self {
        let changes = Arc::clone(inner.lock_running().entry(hash.clone()).or_default());
        let since = changes.heard.load(Ordering::Acquire);
        Waiting {
            inner,
            hash,
            changes,
            since,
            until: tokio::time::Instant::now() + poll,
        }
    }

    pub(super) async fn wait(self) {
        let notified = self.changes.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if self.changes.heard.load(Ordering::Acquire) != self.since {
            return;
        }
        tokio::select! {
            () = notified => {}
            () = tokio::time::sleep_until(self.until) => {}
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let mut running = self.inner.lock_running();
        // The map's and this one's: no other wait for the task.
        if Arc::strong_count(&self.changes) <= 2 {
            running.remove(&self.hash);
        }
    }
}
