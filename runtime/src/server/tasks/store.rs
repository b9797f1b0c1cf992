//! The seam between the server and where its tasks live: [`TaskStore`]. The server mints a
//! task's id, runs its handler and answers `tasks/*`; a store keeps what any replica must be
//! able to read: the task's state, its questions and their answers, a cancel asked for, and
//! the lease of the replica running it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::model::{DetailedTask, InputRequests, InputResponses, JsonObject};

use crate::tool::BoxFuture;

/// Keeps the tasks of a server (MCP tasks extension, SEP-2663). [`MemoryTaskStore`] keeps them
/// in this process (the default); a store shared by replicas (Redis) lets any of them answer
/// `tasks/get`, `tasks/update` and `tasks/cancel` for a task another runs.
///
/// Two sides use a store. The client's side (`create`, `get`, `answer`, `cancel`) names the
/// caller: a store keeps a keyed hash of the caller's key with each task (never the key) and
/// treats a task of another caller as unknown. The running side (`record`, `renew`,
/// `take_answers`, `changed`) is the replica that runs the task's handler, by id alone.
///
/// A store keeps these rules, whichever holds the state:
/// - a task is readable by `get` as soon as `create` returned;
/// - a terminal status (`completed`, `failed`, `cancelled`) is final: a later `record` is
///   ignored and answers [`Held::Gone`];
/// - a task whose lease lapsed while not terminal reads `failed`, with
///   [`orphaned_error`]'s error (its replica stopped);
/// - a task is gone (unknown) once its `ttl` since creation has passed, whatever its status;
/// - a caller holds at most `max_per_caller` unexpired tasks.
///
/// [`MemoryTaskStore`]: super::MemoryTaskStore
///
/// ```
/// use std::time::Duration;
/// use mcp_fusion::server::tasks::{Held, MemoryTaskStore, NewTask, TaskStore, TaskUpdate};
/// use rmcp::model::TaskStatus;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let store = MemoryTaskStore::new();
/// let new = NewTask::new("7f3c9a", Some("alice"), Duration::from_secs(60));
/// store.create(new).await.unwrap();
/// let read = store.get(Some("alice"), "7f3c9a").await.unwrap().unwrap();
/// assert_eq!(read.status(), TaskStatus::Working);
/// // Another caller does not see it.
/// assert!(store.get(Some("mallory"), "7f3c9a").await.unwrap().is_none());
///
/// let done = TaskUpdate::Completed(serde_json::from_value(
///     serde_json::json!({"content": [], "isError": false}),
/// ).unwrap());
/// assert_eq!(store.record("7f3c9a", done).await.unwrap(), Held::Running);
/// let read = store.get(Some("alice"), "7f3c9a").await.unwrap().unwrap();
/// assert_eq!(read.status(), TaskStatus::Completed);
/// # }
/// ```
pub trait TaskStore: Send + Sync + 'static {
    /// Creates the task `task.id` for `task.caller`, `working`, leased to this replica for
    /// `task.lease`; readable by `get` once this returns. Refused with
    /// [`TaskStoreError::TooMany`] when the caller holds `task.max_per_caller` tasks already,
    /// or the store as many as it keeps.
    fn create<'a>(&'a self, task: NewTask<'a>) -> BoxFuture<'a, Result<(), TaskStoreError>>;

    /// The task `id` as `tasks/get` answers it, when it exists and is `caller`'s.
    fn get<'a>(
        &'a self,
        caller: Option<&'a str>,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<DetailedTask>, TaskStoreError>>;

    /// Delivers `answers` (`tasks/update`) to the task's pending questions: an answer under a
    /// key the task is not asking is dropped. Once no question is pending the task is
    /// `working` again. `false` when the task does not exist or is not `caller`'s.
    fn answer<'a>(
        &'a self,
        caller: Option<&'a str>,
        id: &'a str,
        answers: InputResponses,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>>;

    /// Asks for the task to stop (`tasks/cancel`): a task not yet terminal reads `cancelled`
    /// at once, and the replica running it learns of it on its next `renew` (or `changed`).
    /// A terminal task is left as it is. `false` when the task does not exist or is not
    /// `caller`'s.
    fn cancel<'a>(
        &'a self,
        caller: Option<&'a str>,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>>;

    /// Records what the running task did (progress, questions, its end), and whether it should
    /// go on.
    fn record<'a>(
        &'a self,
        id: &'a str,
        update: TaskUpdate,
    ) -> BoxFuture<'a, Result<Held, TaskStoreError>>;

    /// Renews the running replica's lease on the task for `lease` from now, and tells whether
    /// it should go on (a cancel asked through any replica answers [`Held::Cancelled`]).
    fn renew<'a>(
        &'a self,
        id: &'a str,
        lease: Duration,
    ) -> BoxFuture<'a, Result<Held, TaskStoreError>>;

    /// The answers to the task's questions, taken (each is handed over once), once every
    /// question it asked is answered; `None` while one is still pending.
    fn take_answers<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<InputResponses>, TaskStoreError>>;

    /// Completes when a client may have answered or cancelled the task: at once for a store
    /// that is told (in process, or by a notification), after an interval for one that is
    /// asked (a second by default). The running side then reads the store again (`renew`,
    /// `take_answers`), so a store that polls sets how often it is asked. It may complete
    /// when nothing happened. The future is made before the store is read and awaited after:
    /// a store that is told watches from the moment it is made.
    fn changed<'a>(&'a self, id: &'a str) -> BoxFuture<'a, ()> {
        let _ = id;
        Box::pin(tokio::time::sleep(Duration::from_secs(1)))
    }

    /// Why this store cannot keep tasks per caller as it is set up (caller keys it would store
    /// readable), one sentence naming the fix; `None` when it can. Asked when a server with
    /// tasks is built, which then fails with the reason.
    fn refuses_caller_keys(&self) -> Option<String> {
        None
    }
}

/// A task to create.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct NewTask<'a> {
    /// Its id: minted by the server from the operating system's random source.
    pub id: &'a str,
    /// The key of the caller it belongs to (its OAuth subject, else the server's rate-limit
    /// key), `None` for an anonymous caller: every anonymous caller is one.
    pub caller: Option<&'a str>,
    /// How long it is kept from now (`ttlMs`), whatever its status.
    pub ttl: Duration,
    /// The interval clients are told to poll it at (`pollIntervalMs`).
    pub poll_interval: Duration,
    /// The lease its replica holds: not renewed within it, the task reads `failed`.
    pub lease: Duration,
    /// The most tasks one caller holds at once.
    pub max_per_caller: usize,
    /// When it was created (its `createdAt`, which the server tells the client as it creates
    /// it): a store writes this, not a time of its own.
    pub created: SystemTime,
}

impl<'a> NewTask<'a> {
    /// The task `id` of `caller`, kept for `ttl`; polled every second, leased for 10 s, at
    /// most 100 tasks per caller.
    ///
    /// ```
    /// use std::time::Duration;
    /// let task = mcp_fusion::server::tasks::NewTask::new("a1", None, Duration::from_secs(60));
    /// assert_eq!(task.max_per_caller, 100);
    /// ```
    pub fn new(id: &'a str, caller: Option<&'a str>, ttl: Duration) -> Self {
        NewTask {
            id,
            caller,
            ttl,
            poll_interval: Duration::from_secs(1),
            lease: Duration::from_secs(10),
            max_per_caller: 100,
            created: SystemTime::now(),
        }
    }

    /// The same, created at `at`.
    pub fn created(mut self, at: SystemTime) -> Self {
        self.created = at;
        self
    }

    /// The same, polled every `interval`.
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// The same, leased for `lease`.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// The same, at most `max` tasks per caller.
    pub fn max_per_caller(mut self, max: usize) -> Self {
        self.max_per_caller = max;
        self
    }
}

/// What a running task did.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum TaskUpdate {
    /// Progress of a working task: its message for the reader, if any. It changes nothing
    /// of a task that is not `working` (one asking questions keeps asking them: the store
    /// makes it `working` again once they are answered).
    Working {
        /// The task's `statusMessage`.
        message: Option<String>,
    },
    /// Waiting for the client to answer these questions (`input_required`); their keys are
    /// unique over the task's life.
    InputRequired(InputRequests),
    /// Done: the tool's result (a tool error too, with `isError`).
    Completed(JsonObject),
    /// Failed: the JSON-RPC error a direct call would have answered.
    Failed(JsonObject),
}

/// Whether the running side of a task should go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Held {
    /// The task runs here: go on.
    Running,
    /// A client cancelled it: stop the handler.
    Cancelled,
    /// It is terminal, expired, or its lease lapsed: stop, nothing more is recorded.
    Gone,
}

/// Why a store did not do what it was asked.
///
/// ```
/// use mcp_fusion::server::tasks::TaskStoreError;
/// let full = TaskStoreError::TooMany { max: 100 };
/// assert!(full.to_string().contains("100"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// The caller (or the store) holds as many tasks as it may.
    TooMany {
        /// The cap that refused.
        max: usize,
    },
    /// The store cannot answer (Redis unreachable, say).
    Unavailable {
        /// What went wrong, for the log.
        reason: String,
    },
}

impl std::fmt::Display for TaskStoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TaskStoreError::TooMany { max } => write!(f, "at most {max} tasks are held at once"),
            TaskStoreError::Unavailable { reason } => {
                write!(f, "the task store is unavailable: {reason}")
            }
        }
    }
}

impl std::error::Error for TaskStoreError {}

/// The message of a task whose replica stopped before it finished.
pub const ORPHANED: &str = "The server replica running this task stopped before the task \
                            finished, so it will not finish: call the tool again to start it anew.";

/// The error a task whose lease lapsed reads with (`failed`): INTERNAL_ERROR, [`ORPHANED`].
///
/// ```
/// let error = mcp_fusion::server::tasks::orphaned_error();
/// assert_eq!(error["code"], -32603);
/// ```
pub fn orphaned_error() -> JsonObject {
    let mut error = JsonObject::new();
    error.insert("code".into(), (-32603).into());
    error.insert("message".into(), ORPHANED.into());
    error
}

/// `at` as an ISO 8601 UTC date-time with milliseconds (`2026-07-28T10:30:00.123Z`), as a
/// task's `createdAt` and `lastUpdatedAt` are written.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// let at = UNIX_EPOCH + Duration::from_millis(1_785_234_600_123);
/// assert_eq!(mcp_fusion::server::tasks::timestamp(at), "2026-07-28T10:30:00.123Z");
/// ```
pub fn timestamp(at: SystemTime) -> String {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        since.subsec_millis()
    )
}

/// The Gregorian date `days` days after 1970-01-01 (days-to-civil over 400-year eras).
fn civil(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_dates() {
        assert_eq!(timestamp(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(timestamp(leap), "2000-02-29T00:00:00.000Z");
        let end = UNIX_EPOCH + Duration::from_secs(4_102_444_799); // 2099-12-31T23:59:59
        assert_eq!(timestamp(end), "2099-12-31T23:59:59.000Z");
    }
}
