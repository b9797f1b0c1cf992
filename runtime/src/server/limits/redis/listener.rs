//! Hears one pub/sub channel of a store's Redis and hands each message to the store: the
//! limits store hears leases released by any replica (`{prefix}:released`) and wakes the head
//! of their line; the task store hears tasks answered or cancelled (`{prefix}:tasks:changed`)
//! and wakes their running side. Either polls meanwhile, so a lost subscription only delays.

use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::time::Duration;

use redis::RedisError;

use super::connection::Connection;
use super::shared::Inner;

/// A store that listens to one channel of its Redis.
pub(in crate::server) trait Hears: Send + Sync + 'static {
    /// The store's connection, whose announcer subscribes.
    fn connection(&self) -> &Connection;
    /// The channel heard.
    fn channel(&self) -> String;
    /// How long one Redis operation may take.
    fn timeout(&self) -> Duration;
    /// A message of the channel.
    fn heard(&self, payload: &str);
}

impl Hears for Inner {
    fn connection(&self) -> &Connection {
        &self.connection
    }

    fn channel(&self) -> String {
        Inner::channel(self)
    }

    fn timeout(&self) -> Duration {
        self.timeout
    }

    /// A lease of the sorted set `payload` was released: its line's head may take it.
    fn heard(&self, payload: &str) {
        if let Some(wake) = self.lock_wakers().get(payload) {
            wake.notify_waiters();
        }
    }
}

impl Inner {
    /// Starts listening for released leases, once per store.
    pub(super) fn listen(self: &Arc<Self>) {
        self.listener
            .get_or_init(|| tokio::spawn(listen(Arc::downgrade(self))));
    }
}

/// Hands each message of the store's channel to the store while it lives; subscribes again a
/// second after an error.
pub(in crate::server) async fn listen<S: Hears>(store: Weak<S>) {
    loop {
        let Some(inner) = store.upgrade() else { return };
        let (channel, timeout) = (inner.channel(), inner.timeout());
        let subscribed = async {
            let client = inner.connection().announcer().await?;
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
                if let Ok(payload) = message.get_payload::<String>() {
                    store.heard(&payload);
                }
            }
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn next<S: futures_core::Stream + Unpin>(stream: &mut S) -> Option<S::Item> {
    std::future::poll_fn(|cx| Pin::new(&mut *stream).poll_next(cx)).await
}
