//! Tasks kept in this process: [`MemoryTaskStore`], the default. Each task is held until its
//! `ttl` passes, its caller held as the first 128 bits of a SHA-256 of the caller's key under
//! a per-process random salt (never the key); a sweep forgets expired tasks as new ones come,
//! so memory is bounded by the caps (per caller, and for the store).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use rmcp::model::{DetailedTask, InputResponses, Task, TaskPayload, TaskStatus};
use sha2::{Digest, Sha256};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::tool::BoxFuture;

use super::store::{
    Held, NewTask, ORPHANED, TaskStore, TaskStoreError, TaskUpdate, orphaned_error, timestamp,
};

/// How many tasks a [`MemoryTaskStore`] holds at most by default, all callers together.
pub const DEFAULT_MAX_TASKS: usize = 10_000;

/// The tasks of a server, in this process. Cheap to clone: clones share the tasks.
///
/// ```
/// use mcp_fusion::server::tasks::MemoryTaskStore;
/// let store = MemoryTaskStore::new().max_tasks(1_000);
/// # let _ = store;
/// ```
#[derive(Clone)]
pub struct MemoryTaskStore {
    inner: Arc<Inner>,
}

struct Inner {
    salt: [u8; 32],
    max_tasks: usize,
    tasks: Mutex<Tasks>,
}

#[derive(Default)]
struct Tasks {
    by_id: HashMap<String, Entry>,
    /// How many unexpired tasks each caller holds, by keyed hash.
    per_caller: HashMap<u128, usize>,
    /// When each task expires, soonest first.
    expiry: BinaryHeap<Reverse<(Instant, String)>>,
}

struct Entry {
    caller: u128,
    task: DetailedTask,
    expires: Instant,
    leased_until: Instant,
    cancel_asked: bool,
    /// Answers delivered and not yet taken by the running side.
    answers: InputResponses,
    /// Told when a client answers or cancels.
    changed: Arc<watch::Sender<()>>,
}

impl Default for MemoryTaskStore {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryTaskStore")
            .field("max_tasks", &self.inner.max_tasks)
            .finish_non_exhaustive()
    }
}

impl MemoryTaskStore {
    /// An empty store holding at most [`DEFAULT_MAX_TASKS`] tasks.
    pub fn new() -> Self {
        let mut salt = [0u8; 32];
        getrandom::fill(&mut salt).expect("the operating system's random source");
        MemoryTaskStore {
            inner: Arc::new(Inner {
                salt,
                max_tasks: DEFAULT_MAX_TASKS,
                tasks: Mutex::default(),
            }),
        }
    }

    /// The same store, holding at most `max` tasks (all callers together); past it, creating
    /// a task is refused ([`TaskStoreError::TooMany`]) until one expires. Call it before the
    /// store is shared.
    ///
    /// ```
    /// let store = mcp_fusion::server::tasks::MemoryTaskStore::new().max_tasks(10);
    /// # let _ = store;
    /// ```
    pub fn max_tasks(self, max: usize) -> Self {
        MemoryTaskStore {
            inner: Arc::new(Inner {
                salt: self.inner.salt,
                max_tasks: max,
                tasks: Mutex::default(),
            }),
        }
    }

    /// How many tasks are held (expired ones not yet swept included).
    pub fn len(&self) -> usize {
        self.inner.lock().by_id.len()
    }

    /// Whether no task is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, Tasks> {
        self.tasks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn caller(&self, key: Option<&str>) -> u128 {
        let mut hash = Sha256::new();
        hash.update(self.salt);
        match key {
            Some(key) => {
                hash.update([1]);
                hash.update(key.as_bytes());
            }
            None => hash.update([0]),
        }
        let digest = hash.finalize();
        let mut first = [0u8; 16];
        first.copy_from_slice(&digest[..16]);
        u128::from_be_bytes(first)
    }
}

impl Tasks {
    /// Forgets the tasks whose ttl has passed.
    fn sweep(&mut self, now: Instant) {
        while let Some(Reverse((at, _))) = self.expiry.peek() {
            if *at > now {
                break;
            }
            let Some(Reverse((_, id))) = self.expiry.pop() else {
                break;
            };
            if let Some(entry) = self.by_id.get(&id)
                && entry.expires <= now
            {
                let caller = entry.caller;
                self.by_id.remove(&id);
                if let Some(held) = self.per_caller.get_mut(&caller) {
                    *held -= 1;
                    if *held == 0 {
                        self.per_caller.remove(&caller);
                    }
                }
            }
        }
    }

    /// The live task `id`, when it is `caller`'s (any caller's for `None`), its lapsed lease
    /// read as `failed`.
    fn live(&mut self, id: &str, caller: Option<u128>, now: Instant) -> Option<&mut Entry> {
        self.sweep(now);
        let entry = self.by_id.get_mut(id)?;
        if caller.is_some_and(|caller| caller != entry.caller) {
            return None;
        }
        if !entry.task.status().is_terminal() && entry.leased_until <= now {
            entry.set(TaskPayload::Failed {
                error: orphaned_error(),
            });
            entry.task.task.status_message = Some(ORPHANED.to_owned());
        }
        Some(entry)
    }
}

impl Entry {
    fn set(&mut self, payload: TaskPayload) {
        let task = std::mem::take(&mut self.task.task);
        self.task = DetailedTask::new(task, payload);
        self.task.task.last_updated_at = timestamp(SystemTime::now());
    }

    fn held(&self) -> Held {
        match (self.task.status(), self.cancel_asked) {
            (_, true) => Held::Cancelled,
            (status, false) if status.is_terminal() => Held::Gone,
            _ => Held::Running,
        }
    }
}

fn ready<T: Send + 'static>(value: T) -> BoxFuture<'static, T> {
    Box::pin(std::future::ready(value))
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl TaskStore for MemoryTaskStore {
    fn create<'a>(&'a self, new: NewTask<'a>) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        let caller = self.inner.caller(new.caller);
        let now = Instant::now();
        let mut tasks = self.inner.lock();
        tasks.sweep(now);
        if tasks.by_id.len() >= self.inner.max_tasks {
            let max = self.inner.max_tasks;
            return ready(Err(TaskStoreError::TooMany { max }));
        }
        let held = tasks.per_caller.get(&caller).copied().unwrap_or(0);
        if held >= new.max_per_caller || tasks.by_id.contains_key(new.id) {
            let max = new.max_per_caller;
            return ready(Err(TaskStoreError::TooMany { max }));
        }
        let at = timestamp(new.created);
        let task = Task::new(new.id, TaskStatus::Working, at.clone(), at)
            .with_ttl_ms(millis(new.ttl))
            .with_poll_interval_ms(millis(new.poll_interval).max(1));
        let expires = now + new.ttl;
        tasks.by_id.insert(
            new.id.to_owned(),
            Entry {
                caller,
                task: DetailedTask::new(task, TaskPayload::Working),
                expires,
                leased_until: now + new.lease,
                cancel_asked: false,
                answers: InputResponses::new(),
                changed: Arc::new(watch::Sender::new(())),
            },
        );
        *tasks.per_caller.entry(caller).or_default() += 1;
        tasks.expiry.push(Reverse((expires, new.id.to_owned())));
        ready(Ok(()))
    }

    fn get<'a>(
        &'a self,
        caller: Option<&'a str>,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<DetailedTask>, TaskStoreError>> {
        let caller = self.inner.caller(caller);
        let mut tasks = self.inner.lock();
        let read = tasks.live(id, Some(caller), Instant::now());
        ready(Ok(read.map(|entry| entry.task.clone())))
    }

    fn answer<'a>(
        &'a self,
        caller: Option<&'a str>,
        id: &'a str,
        answers: InputResponses,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        let caller = self.inner.caller(caller);
        let mut tasks = self.inner.lock();
        let Some(entry) = tasks.live(id, Some(caller), Instant::now()) else {
            return ready(Ok(false));
        };
        let TaskPayload::InputRequired { input_requests } = &mut entry.task.payload else {
            return ready(Ok(true));
        };
        let mut took = false;
        for (key, answer) in answers {
            if input_requests.remove(&key).is_some() {
                entry.answers.insert(key, answer);
                took = true;
            }
        }
        if input_requests.is_empty() {
            entry.set(TaskPayload::Working);
        } else if took {
            entry.task.task.last_updated_at = timestamp(SystemTime::now());
        }
        if took {
            entry.changed.send_replace(());
        }
        ready(Ok(true))
    }

    fn cancel<'a>(
        &'a self,
        caller: Option<&'a str>,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        let caller = self.inner.caller(caller);
        let mut tasks = self.inner.lock();
        let Some(entry) = tasks.live(id, Some(caller), Instant::now()) else {
            return ready(Ok(false));
        };
        if !entry.task.status().is_terminal() {
            entry.set(TaskPayload::Cancelled);
            entry.cancel_asked = true;
            entry.changed.send_replace(());
        }
        ready(Ok(true))
    }

    fn record<'a>(
        &'a self,
        id: &'a str,
        update: TaskUpdate,
    ) -> BoxFuture<'a, Result<Held, TaskStoreError>> {
        let mut tasks = self.inner.lock();
        let Some(entry) = tasks.live(id, None, Instant::now()) else {
            return ready(Ok(Held::Gone));
        };
        let held = entry.held();
        if held != Held::Running {
            return ready(Ok(held));
        }
        match update {
            // Progress: a task asking questions keeps asking them (a late report of the run
            // the questions ended must not take them back).
            TaskUpdate::Working { message } => {
                if entry.task.status() == TaskStatus::Working {
                    entry.task.task.status_message = message;
                    entry.task.task.last_updated_at = timestamp(SystemTime::now());
                }
            }
            TaskUpdate::InputRequired(input_requests) => {
                entry.task.task.status_message = None;
                entry.set(TaskPayload::InputRequired { input_requests });
            }
            TaskUpdate::Completed(result) => {
                entry.task.task.status_message = None;
                entry.set(TaskPayload::Completed { result });
            }
            TaskUpdate::Failed(error) => {
                entry.task.task.status_message = None;
                entry.set(TaskPayload::Failed { error });
            }
        }
        ready(Ok(Held::Running))
    }

    fn renew<'a>(
        &'a self,
        id: &'a str,
        lease: Duration,
    ) -> BoxFuture<'a, Result<Held, TaskStoreError>> {
        let now = Instant::now();
        let mut tasks = self.inner.lock();
        let Some(entry) = tasks.live(id, None, now) else {
            return ready(Ok(Held::Gone));
        };
        let held = entry.held();
        if held == Held::Running {
            entry.leased_until = now + lease;
        }
        ready(Ok(held))
    }

    fn take_answers<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<InputResponses>, TaskStoreError>> {
        let mut tasks = self.inner.lock();
        let Some(entry) = tasks.live(id, None, Instant::now()) else {
            return ready(Ok(None));
        };
        if entry.task.status() == TaskStatus::InputRequired {
            return ready(Ok(None));
        }
        ready(Ok(Some(std::mem::take(&mut entry.answers))))
    }

    fn changed<'a>(&'a self, id: &'a str) -> BoxFuture<'a, ()> {
        // Subscribed now: a change after this call is seen, whenever the future is polled.
        let watching = {
            let tasks = self.inner.lock();
            tasks.by_id.get(id).map(|entry| entry.changed.subscribe())
        };
        Box::pin(async move {
            match watching {
                Some(mut watching) => {
                    if watching.changed().await.is_err() {
                        // The task was forgotten: nothing more will change.
                        std::future::pending::<()>().await;
                    }
                }
                None => std::future::pending().await,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ElicitRequest, ElicitRequestParams, InputRequest, InputRequests};
    use serde_json::json;

    const TTL: Duration = Duration::from_secs(60);

    fn question() -> InputRequest {
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "mode": "form", "message": "Sure?",
            "requestedSchema": {"type": "object", "properties": {}}
        }))
        .unwrap();
        InputRequest::Elicitation(ElicitRequest::new(params))
    }

    fn result() -> rmcp::model::JsonObject {
        serde_json::from_value(json!({"content": [], "isError": false})).unwrap()
    }

    async fn status(store: &MemoryTaskStore, caller: &str, id: &str) -> Option<TaskStatus> {
        let read = store.get(Some(caller), id).await.unwrap();
        read.map(|task| task.status())
    }

    #[tokio::test(start_paused = true)]
    async fn a_task_is_its_callers_alone_and_gone_after_its_ttl() {
        let store = MemoryTaskStore::new();
        store
            .create(NewTask::new("t1", Some("a"), TTL))
            .await
            .unwrap();
        assert_eq!(status(&store, "a", "t1").await, Some(TaskStatus::Working));
        assert_eq!(status(&store, "b", "t1").await, None);
        assert!(!store.cancel(Some("b"), "t1").await.unwrap());
        assert!(
            !store
                .answer(Some("b"), "t1", InputResponses::new())
                .await
                .unwrap()
        );
        store
            .record("t1", TaskUpdate::Completed(result()))
            .await
            .unwrap();
        tokio::time::advance(TTL - Duration::from_millis(1)).await;
        assert_eq!(status(&store, "a", "t1").await, Some(TaskStatus::Completed));
        tokio::time::advance(Duration::from_millis(1)).await;
        assert_eq!(status(&store, "a", "t1").await, None);
        assert!(store.is_empty(), "the expired task is forgotten");
    }

    #[tokio::test(start_paused = true)]
    async fn callers_are_capped_and_their_places_come_back_with_the_ttl() {
        let store = MemoryTaskStore::new().max_tasks(3);
        let new = |id| NewTask::new(id, Some("a"), TTL).max_per_caller(2);
        store.create(new("1")).await.unwrap();
        store.create(new("2")).await.unwrap();
        let full = store.create(new("3")).await;
        assert_eq!(full, Err(TaskStoreError::TooMany { max: 2 }));
        store
            .create(NewTask::new("4", Some("b"), TTL))
            .await
            .unwrap();
        let all = store.create(NewTask::new("5", Some("c"), TTL)).await;
        assert_eq!(all, Err(TaskStoreError::TooMany { max: 3 }));
        tokio::time::advance(TTL).await;
        store.create(new("3")).await.unwrap();
        assert_eq!(store.len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn questions_are_answered_in_parts_and_strangers_dropped() {
        let store = MemoryTaskStore::new();
        store.create(NewTask::new("t", None, TTL)).await.unwrap();
        let asks = InputRequests::from([("a".into(), question()), ("b".into(), question())]);
        store
            .record("t", TaskUpdate::InputRequired(asks))
            .await
            .unwrap();
        // A late progress report of the run that asked does not take the questions back.
        let late = TaskUpdate::Working {
            message: Some("late".into()),
        };
        assert_eq!(store.record("t", late).await.unwrap(), Held::Running);
        let changed = store.changed("t");
        let part = InputResponses::from([("a".into(), json!(1)), ("zzz".into(), json!(2))]);
        assert!(store.answer(None, "t", part).await.unwrap());
        changed.await;
        let read = store.get(None, "t").await.unwrap().unwrap();
        let TaskPayload::InputRequired { input_requests } = read.payload else {
            panic!("still asking b: {read:?}");
        };
        assert_eq!(input_requests.keys().collect::<Vec<_>>(), ["b"]);
        assert_eq!(store.take_answers("t").await.unwrap(), None);
        let rest = InputResponses::from([("b".into(), json!(3))]);
        assert!(store.answer(None, "t", rest).await.unwrap());
        assert_eq!(status(&store, "", "t").await, None, "another caller");
        let taken = store.take_answers("t").await.unwrap().unwrap();
        assert_eq!(
            taken,
            InputResponses::from([("a".into(), json!(1)), ("b".into(), json!(3))])
        );
        assert_eq!(
            store.take_answers("t").await.unwrap(),
            Some(InputResponses::new())
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_cancel_reads_at_once_and_reaches_the_runner_a_terminal_task_stays() {
        let store = MemoryTaskStore::new();
        store.create(NewTask::new("t", None, TTL)).await.unwrap();
        assert!(store.cancel(None, "t").await.unwrap());
        let read = store.get(None, "t").await.unwrap().unwrap();
        assert_eq!(read.status(), TaskStatus::Cancelled);
        assert_eq!(store.renew("t", TTL).await.unwrap(), Held::Cancelled);
        let late = store
            .record("t", TaskUpdate::Completed(result()))
            .await
            .unwrap();
        assert_eq!(late, Held::Cancelled);
        assert_eq!(status_of(&store, "t").await, TaskStatus::Cancelled);

        store.create(NewTask::new("done", None, TTL)).await.unwrap();
        store
            .record("done", TaskUpdate::Completed(result()))
            .await
            .unwrap();
        for _ in 0..100 {
            assert!(store.cancel(None, "done").await.unwrap());
        }
        assert_eq!(status_of(&store, "done").await, TaskStatus::Completed);
    }

    async fn status_of(store: &MemoryTaskStore, id: &str) -> TaskStatus {
        store.get(None, id).await.unwrap().unwrap().status()
    }

    #[tokio::test(start_paused = true)]
    async fn a_lapsed_lease_reads_failed_and_says_to_start_again() {
        let store = MemoryTaskStore::new();
        let lease = Duration::from_secs(10);
        store
            .create(NewTask::new("t", None, TTL).lease(lease))
            .await
            .unwrap();
        tokio::time::advance(lease / 2).await;
        assert_eq!(store.renew("t", lease).await.unwrap(), Held::Running);
        tokio::time::advance(lease - Duration::from_millis(1)).await;
        assert_eq!(status_of(&store, "t").await, TaskStatus::Working);
        tokio::time::advance(Duration::from_millis(1)).await;
        let read = store.get(None, "t").await.unwrap().unwrap();
        let TaskPayload::Failed { error } = &read.payload else {
            panic!("failed: {read:?}");
        };
        assert_eq!(error["code"], -32603);
        assert!(error["message"].as_str().unwrap().contains("start it anew"));
        assert_eq!(store.renew("t", lease).await.unwrap(), Held::Gone);
    }
}
