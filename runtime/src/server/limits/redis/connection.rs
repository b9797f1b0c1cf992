//! How a store reaches Redis: one node, a Redis Cluster, or the master a set of Sentinels name,
//! followed through a failover. Knows nothing of limits: it runs the scripts it is handed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig, MultiplexedConnection};
use redis::sentinel::{SentinelClient, SentinelServerType};
use redis::{AsyncConnectionConfig, Client, RedisError, RedisResult};

/// Which Redis a store is built for.
#[derive(Clone)]
pub(in crate::server) enum Target {
    Node(String),
    Cluster(Vec<String>),
    Sentinel {
        sentinels: Vec<String>,
        name: String,
    },
}

/// Each URL without its password: what a log line or a panic may show.
impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let all = |urls: &[String]| urls.iter().map(|u| redacted(u)).collect::<Vec<_>>();
        match self {
            Target::Node(url) => f.debug_tuple("Node").field(&redacted(url)).finish(),
            Target::Cluster(nodes) => f.debug_tuple("Cluster").field(&all(nodes)).finish(),
            Target::Sentinel { sentinels, name } => f
                .debug_struct("Sentinel")
                .field("sentinels", &all(sentinels))
                .field("name", name)
                .finish(),
        }
    }
}

/// `url` with its password replaced by `<redacted>`: the userinfo's
/// (`redis://user:<redacted>@host`) and a `pass` or `password` query parameter's (a Unix
/// socket's `redis+unix:///run/redis.sock?pass=<redacted>`). The rest, which tells stores
/// apart, is kept; when in doubt (an `@` in the query), more is hidden, never less.
pub(super) fn redacted(url: &str) -> String {
    const HIDDEN: &str = "<redacted>";
    let (scheme, rest) = url.split_at(url.find("://").map_or(0, |i| i + 3));
    let mut out = String::with_capacity(url.len());
    out.push_str(scheme);
    // The userinfo ends at the last `@`: a password may hold any character.
    let rest = match rest.rfind('@') {
        Some(at) if !rest.starts_with('/') => {
            let (user, password) = rest[..at].split_once(':').unzip();
            out.push_str(user.unwrap_or(&rest[..at]));
            if password.is_some() {
                out.push(':');
                out.push_str(HIDDEN);
            }
            out.push('@');
            &rest[at + 1..]
        }
        _ => rest,
    };
    let Some((before, query)) = rest.split_once('?') else {
        out.push_str(rest);
        return out;
    };
    out.push_str(before);
    out.push('?');
    for (i, pair) in query.split('&').enumerate() {
        if i > 0 {
            out.push('&');
        }
        match pair.split_once('=') {
            Some((name, _))
                if name.eq_ignore_ascii_case("pass") || name.eq_ignore_ascii_case("password") =>
            {
                out.push_str(name);
                out.push('=');
                out.push_str(HIDDEN);
            }
            _ => out.push_str(pair),
        }
    }
    out
}

/// Where the limits are kept, each with the client released leases are announced through:
/// one Redis (reconnecting in the background), a Redis Cluster (the client follows
/// `MOVED`/`ASK` redirections and the cluster's slot map), or the master Sentinels name.
pub(in crate::server) enum Connection {
    Node(ConnectionManager, Client),
    Cluster(redis::cluster_async::ClusterConnection, Client),
    Sentinel(Box<Master>),
}

impl Connection {
    /// The connection to `target`, made on first use (so a server starts while Redis is
    /// down), each operation answered within `timeout` or counted as failed.
    pub(in crate::server) fn open(
        target: &Target,
        timeout: Duration,
    ) -> Result<Connection, RedisError> {
        Ok(match target {
            Target::Node(url) => {
                let client = Client::open(url.as_str())?;
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(timeout))
                    .set_response_timeout(Some(timeout))
                    .set_number_of_retries(1)
                    .set_max_delay(Duration::from_millis(500));
                let connection = ConnectionManager::new_lazy_with_config(client.clone(), config)?;
                Connection::Node(connection, client)
            }
            Target::Cluster(nodes) => {
                // Released leases are announced on one node: a cluster's classic pub/sub
                // reaches every node's subscribers.
                let Some(first) = nodes.first() else {
                    return Err(RedisError::from((
                        redis::ErrorKind::InvalidClientConfig,
                        "a Redis Cluster needs at least one node to start from",
                    )));
                };
                let client = Client::open(first.as_str())?;
                let cluster =
                    redis::cluster::ClusterClient::builder(nodes.iter().map(String::as_str))
                        .connection_timeout(timeout)
                        .response_timeout(timeout)
                        .retries(2)
                        .min_retry_wait(10)
                        .max_retry_wait(100)
                        .build()?;
                let config = redis::cluster::ClusterConfig::new()
                    .set_connection_timeout(timeout)
                    .set_response_timeout(timeout);
                let connection = cluster.get_pending_async_connection_with_config(config);
                Connection::Cluster(connection, client)
            }
            Target::Sentinel { sentinels, name } => {
                let sentinels = SentinelClient::build(
                    sentinels.iter().map(String::as_str).collect(),
                    name.clone(),
                    None,
                    SentinelServerType::Master,
                )?;
                Connection::Sentinel(Box::new(Master {
                    sentinels: tokio::sync::Mutex::new(sentinels),
                    current: Mutex::new(None),
                    lookups: AtomicU64::new(0),
                    config: AsyncConnectionConfig::new()
                        .set_connection_timeout(Some(timeout))
                        .set_response_timeout(Some(timeout)),
                }))
            }
        })
    }

    /// Runs `invocation` on the Redis that holds its key; the caller bounds how long it takes.
    pub(in crate::server) async fn invoke<T: redis::FromRedisValue>(
        &self,
        invocation: &redis::ScriptInvocation<'_>,
    ) -> RedisResult<T> {
        match self {
            Connection::Node(node, _) => invocation.invoke_async(&mut node.clone()).await,
            Connection::Cluster(cluster, _) => invocation.invoke_async(&mut cluster.clone()).await,
            Connection::Sentinel(master) => master.invoke(invocation).await,
        }
    }

    /// A client of the Redis released leases are announced on.
    pub(in crate::server) async fn announcer(&self) -> RedisResult<Client> {
        match self {
            Connection::Node(_, client) | Connection::Cluster(_, client) => Ok(client.clone()),
            Connection::Sentinel(master) => Ok(master.connection().await?.1),
        }
    }
}

/// The master a set of Sentinels names for a service, asked again once the connection to it
/// is lost, times out, or it answers `READONLY` (demoted by a failover).
pub(in crate::server) struct Master {
    sentinels: tokio::sync::Mutex<SentinelClient>,
    /// The master's client and connection, with the number of the lookup that found them.
    current: Mutex<Option<(u64, Client, MultiplexedConnection)>>,
    lookups: AtomicU64,
    config: AsyncConnectionConfig,
}

impl Master {
    fn lock_current(
        &self,
    ) -> std::sync::MutexGuard<'_, Option<(u64, Client, MultiplexedConnection)>> {
        self.current.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The connection to the master, looked up through the Sentinels when there is none (the
    /// crate checks that the node it names answers `ROLE` as a master).
    async fn connection(&self) -> RedisResult<(u64, Client, MultiplexedConnection)> {
        if let Some(current) = self.lock_current().clone() {
            return Ok(current);
        }
        let mut sentinels = self.sentinels.lock().await;
        // Someone else may have looked it up while this call waited.
        if let Some(current) = self.lock_current().clone() {
            return Ok(current);
        }
        let client = sentinels.async_get_client().await?;
        let connection = client
            .get_multiplexed_async_connection_with_config(&self.config)
            .await?;
        let lookup = self.lookups.fetch_add(1, Ordering::Relaxed);
        let current = (lookup, client, connection);
        *self.lock_current() = Some(current.clone());
        Ok(current)
    }

    /// Forgets the connection found by `lookup` (not a newer one), so the next operation asks
    /// the Sentinels again.
    fn forget(&self, lookup: u64) {
        let mut current = self.lock_current();
        if current
            .as_ref()
            .is_some_and(|(found, _, _)| *found == lookup)
        {
            *current = None;
        }
    }

    async fn invoke<T: redis::FromRedisValue>(
        &self,
        invocation: &redis::ScriptInvocation<'_>,
    ) -> RedisResult<T> {
        let (lookup, _, mut connection) = self.connection().await?;
        // Dropped unanswered (the store's timeout): the master may be gone without a word.
        let mut unanswered = Unanswered(self, Some(lookup));
        let answer = invocation.invoke_async(&mut connection).await;
        if !matches!(&answer, Err(error) if lost_master(error)) {
            unanswered.1 = None;
        }
        answer
    }
}

/// Forgets the master's connection when an operation ends without the master's answer.
struct Unanswered<'a>(&'a Master, Option<u64>);

impl Drop for Unanswered<'_> {
    fn drop(&mut self) {
        if let Some(lookup) = self.1 {
            self.0.forget(lookup);
        }
    }
}

/// Whether an error means the connection no longer leads to the master.
fn lost_master(error: &RedisError) -> bool {
    error.is_io_error()
        || error.is_connection_dropped()
        || error.is_timeout()
        || error.is_unrecoverable_error()
        || error.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::ReadOnly)
}

#[cfg(test)]
mod tests {
    use super::redacted;

    #[test]
    fn passwords_are_redacted_wherever_they_are() {
        for (url, shown) in [
            ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
            ("redis://ada@10.0.0.5", "redis://ada@10.0.0.5"),
            (
                "redis://ada:s3cret@10.0.0.5:6379/2",
                "redis://ada:<redacted>@10.0.0.5:6379/2",
            ),
            ("rediss://:s3cret@host", "rediss://:<redacted>@host"),
            (
                "redis://ada:s3@c/r#et@host/0",
                "redis://ada:<redacted>@host/0",
            ),
            (
                "redis+unix:///run/redis.sock?db=1&pass=s3cret&user=ada",
                "redis+unix:///run/redis.sock?db=1&pass=<redacted>&user=ada",
            ),
            (
                "redis://host/0?Password=s3cret",
                "redis://host/0?Password=<redacted>",
            ),
            ("ada:s3cret@host", "ada:<redacted>@host"),
        ] {
            assert_eq!(redacted(url), shown, "{url}");
        }
    }
}
