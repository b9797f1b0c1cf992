//! Tasks shared by every replica through one Redis, a Redis Cluster, or the master a set of
//! Sentinels names: [`RedisTaskStore`], reached with the same options as the limits'
//! [`RedisStore`](crate::server::limits::RedisStore).
//!
//! - **Any replica answers.** A task is a few keys written by one script per operation on
//!   Redis's clock: created before the task-creation result is sent (readable at once through
//!   any replica), read, answered and cancelled through any.
//! - **A cancel reaches the handler where it runs.** Answers and cancels are announced on
//!   `{prefix}:tasks:changed`; the replica running the task hears it and reads the store
//!   (and at least every second without it, and at each lease renewal).
//! - **A replica that dies leaves no task `working`.** The running replica renews a lease on
//!   its task; a task whose lease lapsed reads `failed`, its error saying the replica stopped
//!   and to start the task again. The first script that finds it so writes it so.
//! - **Nothing grows without a bound.** Every key of a task expires with the task (`ttlMs`
//!   after its creation), each caller holds at most `max_per_caller` tasks and the store at
//!   most [`max_tasks`](RedisTaskStoreBuilder::max_tasks), counted in sorted sets that forget
//!   a task when it expires.
//! - **Nothing a caller sent names a key** (`keys.rs`): a task's keys are a hash of its random
//!   id, its owner a hash of the id and the caller's key, a caller's count the HMAC of its key
//!   under the operator's secret. What a task holds (its questions, answers and result) is
//!   stored as the tool made it: keep Redis as private as the results.
//! - **Outages**: each operation has a timeout; one Redis cannot answer in time fails with
//!   [`TaskStoreError::Unavailable`], logged once per outage, and the server answers the
//!   client so (nothing waits for Redis longer than the timeout).
//!
//! The files: the store and its builder here; `keys.rs`, the names; `scripts.rs`, the Lua;
//! `shared.rs`, what the operations share; `listener.rs`, which hears changed tasks. The connection is the limits store's.

mod keys;
mod listener;
mod scripts;
mod shared;

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, UNIX_EPOCH};

use redis::RedisError;
use rmcp::model::{DetailedTask, InputResponses};

use super::super::limits::redis::connection::{Connection, Target};
use super::store::{Held, NewTask, TaskStore, TaskStoreError, TaskUpdate};
use crate::tool::BoxFuture;
use scripts::SCRIPTS;
use shared::{Inner, Read, Waiting, detailed, held, millis, unavailable};

/// How long an operation may take before the store counts Redis as unavailable.
const DEFAULT_TIMEOUT: Duration = Duration::from_millis(500);
/// How many tasks a store holds at most by default, all callers together.
const DEFAULT_MAX_TASKS: usize = 100_000;
/// The longest the running side waits before reading the store again without a word.
const POLL: Duration = Duration::from_secs(1);

/// Tasks shared by every server that uses the same Redis and prefix: described with
/// [`RedisTaskStore::builder`] (or [`cluster`](Self::cluster), [`sentinel`](Self::sentinel)),
/// handed to [`ServerBuilder::task_store`](crate::server::ServerBuilder::task_store).
///
/// ```no_run
/// use mcp_fusion::server::tasks::RedisTaskStore;
///
/// # fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let tasks = RedisTaskStore::builder("redis://127.0.0.1:6379")
///     .prefix("billing")
///     .key_secret(std::env::var("TASKS_KEY_SECRET")?)
///     .build()?;
/// let server = mcp_fusion::Server::builder("billing", "1").task_store(tasks);
/// # let _ = server;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct RedisTaskStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("prefix", &self.inner.prefix)
            .field("timeout", &self.inner.timeout)
            .finish_non_exhaustive()
    }
}

/// A [`RedisTaskStore`] being described: the settings, then [`build`](Self::build), which makes
/// the connection with them. Its `Debug` shows no credential: neither the password of a Redis
/// URL nor the key secret.
///
/// ```
/// use mcp_fusion::server::tasks::RedisTaskStore;
///
/// let builder = RedisTaskStore::builder("redis://tasks:hunter2@10.0.0.5:6379/0")
///     .key_secret("a secret of 32 random bytes, say");
/// let shown = format!("{builder:?}");
/// assert!(shown.contains("redis://tasks:<redacted>@10.0.0.5:6379/0"));
/// assert!(!shown.contains("hunter2") && !shown.contains("random bytes"));
/// ```
#[derive(Clone)]
#[must_use = "a store is described until it is built"]
pub struct RedisTaskStoreBuilder {
    target: Target,
    prefix: String,
    key_secret: Option<Box<[u8]>>,
    timeout: Duration,
    max_tasks: usize,
}

impl std::fmt::Debug for RedisTaskStoreBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStoreBuilder")
            .field("target", &self.target)
            .field("prefix", &self.prefix)
            .field(
                "key_secret",
                &self.key_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("timeout", &self.timeout)
            .field("max_tasks", &self.max_tasks)
            .finish()
    }
}

impl RedisTaskStore {
    /// Starts describing a store on the Redis at `url` (`redis://host:port/db`).
    pub fn builder(url: impl Into<String>) -> RedisTaskStoreBuilder {
        Self::builder_for(Target::Node(url.into()))
    }

    /// Starts describing a store on a Redis Cluster, reached first through `nodes`: a task's
    /// keys share one hash tag, so each script runs on the one node that holds the task.
    ///
    /// ```no_run
    /// # fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// use mcp_fusion::server::tasks::RedisTaskStore;
    /// let tasks = RedisTaskStore::cluster(["redis://10.0.0.5:6379", "redis://10.0.0.6:6379"])
    ///     .key_secret(std::env::var("TASKS_KEY_SECRET")?)
    ///     .build()?;
    /// # let _ = tasks;
    /// # Ok(()) }
    /// ```
    pub fn cluster<S: Into<String>>(nodes: impl IntoIterator<Item = S>) -> RedisTaskStoreBuilder {
        Self::builder_for(Target::Cluster(nodes.into_iter().map(Into::into).collect()))
    }

    /// Starts describing a store on the Redis master that `sentinels` name `name`, followed
    /// through a failover. Redis replicates asynchronously: a task written in a dead master's
    /// last moments may be lost with it (it then reads as an unknown id).
    ///
    /// ```no_run
    /// # fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// use mcp_fusion::server::tasks::RedisTaskStore;
    /// let tasks = RedisTaskStore::sentinel(["redis://10.0.0.5:26379"], "tasks").build()?;
    /// # let _ = tasks;
    /// # Ok(()) }
    /// ```
    pub fn sentinel<S: Into<String>>(
        sentinels: impl IntoIterator<Item = S>,
        name: impl Into<String>,
    ) -> RedisTaskStoreBuilder {
        Self::builder_for(Target::Sentinel {
            sentinels: sentinels.into_iter().map(Into::into).collect(),
            name: name.into(),
        })
    }

    fn builder_for(target: Target) -> RedisTaskStoreBuilder {
        RedisTaskStoreBuilder {
            target,
            prefix: "mcp-fusion".to_owned(),
            key_secret: None,
            timeout: DEFAULT_TIMEOUT,
            max_tasks: DEFAULT_MAX_TASKS,
        }
    }
}

impl RedisTaskStoreBuilder {
    /// The prefix of every key and channel (`mcp-fusion` by default, without `{` or `}`):
    /// servers with different prefixes share a Redis without sharing tasks.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// The secret a caller's key is hashed under (HMAC-SHA-256) to name its count of tasks:
    /// the same on every replica, at least 16 bytes (32 random ones, say). Without it no
    /// caller's key is stored, so a server whose callers are identified (OAuth, a
    /// `rate_limit_key`) cannot keep their tasks here: its build is refused. Anonymous callers
    /// need none. The limits' secret may be used again.
    pub fn key_secret(mut self, secret: impl AsRef<[u8]>) -> Self {
        self.key_secret = Some(secret.as_ref().into());
        self
    }

    /// How long one operation may take before Redis counts as unavailable (500 ms by default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How many tasks the fleet holds at most, all callers together (100,000 by default):
    /// past it, creating a task is refused until one expires.
    ///
    /// ```
    /// let builder = mcp_fusion::server::tasks::RedisTaskStore::builder("redis://10.0.0.5")
    ///     .max_tasks(1_000_000);
    /// # let _ = builder;
    /// ```
    pub fn max_tasks(mut self, max: usize) -> Self {
        self.max_tasks = max;
        self
    }

    /// The store. Connects on first use, so a server starts while Redis is down; must be
    /// called inside a Tokio runtime. Fails on a malformed URL, a timeout of zero, a prefix
    /// with `{` or `}`, or a key secret shorter than 16 bytes.
    pub fn build(self) -> Result<RedisTaskStore, RedisError> {
        let refuse = |why: &'static str| {
            Err(RedisError::from((
                redis::ErrorKind::InvalidClientConfig,
                why,
            )))
        };
        if self.timeout.is_zero() {
            return refuse("a timeout of zero lets no operation complete");
        }
        if self.prefix.contains(['{', '}']) {
            return refuse("a prefix with `{` or `}` would change the slot of a task's keys");
        }
        if self.key_secret.as_ref().is_some_and(|s| s.len() < 16) {
            return refuse(
                "a key secret of fewer than 16 bytes can be guessed: use 32 random bytes",
            );
        }
        let connection = Connection::open(&self.target, self.timeout)?;
        Ok(RedisTaskStore {
            inner: Arc::new(Inner {
                connection,
                prefix: self.prefix,
                key_secret: self.key_secret,
                timeout: self.timeout,
                max_tasks: self.max_tasks,
                down: AtomicBool::new(false),
                unkeyed_said: AtomicBool::new(false),
                running: Mutex::default(),
                listener: OnceLock::new(),
            }),
        })
    }
}

impl TaskStore for RedisTaskStore {
    fn create<'a>(&'a self, new: NewTask<'a>) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let inner = &self.inner;
            let keys = inner.keys(new.id);
            let count = inner.count_key(new.caller)?;
            let store_count = keys::store_count(&inner.prefix);
            let ttl = millis(new.ttl).max(1);
            let (max, all) = (new.max_per_caller, inner.max_tasks);
            let mut invocation = SCRIPTS.count.key(&count);
            invocation
                .key(&store_count)
                .arg((&keys.hash, ttl, max, all));
            let counted: i64 = inner.within(inner.connection.invoke(&invocation)).await?;
            match counted {
                1 => {}
                0 => return Err(TaskStoreError::TooMany { max }),
                _ => return Err(TaskStoreError::TooMany { max: all }),
            }
            let owner = keys::owner(new.id, new.caller);
            let created = new.created.duration_since(UNIX_EPOCH).unwrap_or_default();
            let args = (
                owner,
                ttl,
                millis(new.poll_interval).max(1),
                millis(new.lease).max(1),
                millis(created),
            );
            let created = inner.on_task::<i64>(&SCRIPTS.create, &keys, args).await;
            // Not created, or not known to be: counted until its ttl at most otherwise.
            if created != Ok(1) {
                let mut invocation = SCRIPTS.uncount.key(&count);
                invocation.key(&store_count).arg(&keys.hash);
                let _ = inner
                    .within(inner.connection.invoke::<i64>(&invocation))
                    .await;
            }
            match created? {
                1 => Ok(()),
                _ => Err(unavailable("a task of this id exists".to_owned())),
            }
        })
    }

    fn get<'a>(
        &'a self,
        caller: Option<&'a str>,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<DetailedTask>, TaskStoreError>> {
        Box::pin(async move {
            let keys = self.inner.keys(id);
            let owner = keys::owner(id, caller);
            let read: Option<Read> = self.inner.on_task(&SCRIPTS.get, &keys, owner).await?;
            read.map(|read| detailed(id, read)).transpose()
        })
    }

    fn answer<'a>(
        &'a self,
        caller: Option<&'a str>,
        id: &'a str,
        answers: InputResponses,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        Box::pin(async move {
            let inner = &self.inner;
            let keys = inner.keys(id);
            let mut args = vec![keys::owner(id, caller), inner.channel(), keys.hash.clone()];
            for (key, answer) in answers {
                args.push(key);
                args.push(answer.to_string());
            }
            let found: i64 = inner.on_task(&SCRIPTS.answer, &keys, args).await?;
            Ok(found == 1)
        })
    }

    fn cancel<'a>(
        &'a self,
        caller: Option<&'a str>,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        Box::pin(async move {
            let inner = &self.inner;
            let keys = inner.keys(id);
            let args = (keys::owner(id, caller), inner.channel(), keys.hash.clone());
            let found: i64 = inner.on_task(&SCRIPTS.cancel, &keys, args).await?;
            Ok(found == 1)
        })
    }

    fn record<'a>(
        &'a self,
        id: &'a str,
        update: TaskUpdate,
    ) -> BoxFuture<'a, Result<Held, TaskStoreError>> {
        Box::pin(async move {
            let keys = self.inner.keys(id);
            let args: Vec<String> = match update {
                TaskUpdate::Working { message } => vec!["m".into(), message.unwrap_or_default()],
                TaskUpdate::InputRequired(questions) => {
                    let mut args = vec!["q".to_owned()];
                    for (key, request) in questions {
                        let request = serde_json::to_string(&request)
                            .map_err(|e| unavailable(format!("a question as JSON: {e}")))?;
                        args.extend([key, request]);
                    }
                    args
                }
                TaskUpdate::Completed(result) => {
                    vec![
                        "completed".into(),
                        serde_json::Value::Object(result).to_string(),
                    ]
                }
                TaskUpdate::Failed(error) => {
                    vec![
                        "failed".into(),
                        serde_json::Value::Object(error).to_string(),
                    ]
                }
            };
            let code: i64 = self.inner.on_task(&SCRIPTS.record, &keys, args).await?;
            Ok(held(code))
        })
    }

    fn renew<'a>(
        &'a self,
        id: &'a str,
        lease: Duration,
    ) -> BoxFuture<'a, Result<Held, TaskStoreError>> {
        Box::pin(async move {
            let keys = self.inner.keys(id);
            let lease = millis(lease).max(1);
            let code: i64 = self.inner.on_task(&SCRIPTS.renew, &keys, lease).await?;
            Ok(held(code))
        })
    }

    fn take_answers<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<InputResponses>, TaskStoreError>> {
        Box::pin(async move {
            let keys = self.inner.keys(id);
            let taken: Option<Vec<String>> = self
                .inner
                .on_task(&SCRIPTS.take, &keys, Vec::<String>::new())
                .await?;
            let Some(taken) = taken else { return Ok(None) };
            let mut answers = InputResponses::new();
            for pair in taken.chunks_exact(2) {
                let answer = serde_json::from_str(&pair[1])
                    .map_err(|e| unavailable(format!("a task's stored answer: {e}")))?;
                answers.insert(pair[0].clone(), answer);
            }
            Ok(Some(answers))
        })
    }

    fn changed<'a>(&'a self, id: &'a str) -> BoxFuture<'a, ()> {
        let inner = Arc::clone(&self.inner);
        inner.listen();
        let hash = inner.keys(id).hash;
        Box::pin(Waiting::begin(inner, hash, POLL).wait())
    }

    fn refuses_caller_keys(&self) -> Option<String> {
        self.inner.key_secret.is_none().then(|| {
            "tasks kept per caller in Redis need a secret to hash caller keys under, so that whoever reads Redis cannot test guesses of them (an email, a subject); set RedisTaskStoreBuilder::key_secret (the same on every replica)".to_owned()
        })
    }
}
