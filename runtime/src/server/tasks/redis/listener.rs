//! Hears tasks answered or cancelled through any replica (Redis pub/sub on
//! `{prefix}:tasks:changed`, each message a task's hash) and wakes the running side of those
//! that run here, so a cancel stops a handler at once rather than at its next lease renewal.

use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::time::Duration;

use redis::RedisError;

use super::shared::Inner;

impl Inner {
    /// Starts listening for changed tasks, once per store.
    pub(super) fn listen(self: &Arc<Self>) {
        self.listener
            .get_or_init(|| tokio::spawn(listen(Arc::downgrade(self))));
    }
}

/// Wakes the running side of each task changed through any replica; subscribes again after an
/// error (the running side reads the store every second meanwhile).
async fn listen(store: Weak<Inner>) {
    loop {
        let Some(inner) = store.upgrade() else { return };
        let (channel, timeout) = (inner.channel(), inner.timeout);
        let subscribed = async {
            let client = inner.connection.announcer().await?;
            let mut pubsub = client.get_async_pubsub().await?;
            pubsub.subscribe(&channel).await?;
            Ok::<_, RedisError>(pubsub)
        };
        let subscribed = tokio::time::timeout(timeout * 4, subscribed).await;
        drop(inner);
        if let Ok(Ok(mut pubsub)) = subscribed {
            let mut messages = pubsub.on_message();
            while let Some(message) = next(&mut messages).await {
                let Some(store) = store.upgrade() else { return };
                let Ok(hash) = message.get_payload::<String>() else {
                    continue;
                };
                if let Some(changes) = store.lock_running().get(&hash) {
                    changes.heard();
                }
            }
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn next<S: futures_core::Stream + Unpin>(stream: &mut S) -> Option<S::Item> {
    std::future::poll_fn(|cx| Pin::new(&mut *stream).poll_next(cx)).await
}
