//! Hears leases released by any replica (Redis pub/sub on `{prefix}:released`) and wakes the
//! head of the line of their sorted set, so a waiting call need not wait for its next poll.

use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::time::Duration;

use redis::RedisError;

use super::shared::Inner;

impl Inner {
    /// Starts listening for released leases, once per store.
    pub(super) fn listen(self: &Arc<Self>) {
        self.listener
            .get_or_init(|| tokio::spawn(listen(Arc::downgrade(self))));
    }
}

/// Wakes the head of each line when a lease of its sorted set is released by any replica;
/// reconnects after an error (the line polls meanwhile).
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
                let Ok(key) = message.get_payload::<String>() else {
                    continue;
                };
                if let Some(wake) = store.lock_wakers().get(&key) {
                    wake.notify_waiters();
                }
            }
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn next<S: futures_core::Stream + Unpin>(stream: &mut S) -> Option<S::Item> {
    std::future::poll_fn(|cx| Pin::new(&mut *stream).poll_next(cx)).await
}
