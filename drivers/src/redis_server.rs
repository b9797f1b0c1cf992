//! A Redis server of our own for a test or a driver: `redis-server` on a free loopback port,
//! with a temporary directory, no persistence, stopped (and its directory removed) when
//! dropped; a Redis Cluster of such servers; a master, its replica and a Sentinel watching
//! them. Used by the tests of limits shared on Redis and the `fleet` driver.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How to get the binary, for the message when it is missing.
const INSTALL: &str = "`cargo xtask test` installs it; by hand: `sudo apt-get install redis-server` \
                       (Debian, Ubuntu) or `brew install redis` (macOS)";

/// A running `redis-server`.
#[derive(Debug)]
pub struct RedisServer {
    child: Option<Child>,
    /// Its loopback port.
    pub port: u16,
    dir: PathBuf,
    /// Settings beside the defaults (`--cluster-enabled yes`).
    extra: Vec<String>,
    /// A configuration file's text, written to its directory and read first (a Sentinel's,
    /// which it rewrites).
    config: Option<String>,
}

impl RedisServer {
    /// Starts one, or says why it could not (never silently).
    pub fn start() -> Result<RedisServer, String> {
        Self::start_with(&[])
    }

    /// Starts one with these settings besides the defaults.
    pub fn start_with(extra: &[&str]) -> Result<RedisServer, String> {
        Self::start_configured(None, extra)
    }

    fn start_configured(config: Option<&str>, extra: &[&str]) -> Result<RedisServer, String> {
        let mut last = String::new();
        // A free port can be taken by someone else before redis binds it: try a few.
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map_err(|e| format!("no free loopback port: {e}"))?
                .port();
            let dir = std::env::temp_dir()
                .join(format!("mcp-fusion-redis-{}-{port}", std::process::id()));
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let mut server = RedisServer {
                child: None,
                port,
                dir,
                extra: extra.iter().map(|a| (*a).to_owned()).collect(),
                config: config.map(str::to_owned),
            };
            match server.spawn() {
                Ok(()) => return Ok(server),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    fn spawn(&mut self) -> Result<(), String> {
        let mut command = Command::new("redis-server");
        if let Some(config) = &self.config {
            let file = self.dir.join("redis.conf");
            std::fs::write(&file, config).map_err(|e| format!("{}: {e}", file.display()))?;
            command.arg(file);
        }
        let child = command
            .args(["--bind", "127.0.0.1", "--port", &self.port.to_string()])
            .args([
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "yes",
            ])
            .arg("--dir")
            .arg(&self.dir)
            .args(&self.extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start redis-server ({e}); {INSTALL}"))?;
        self.child = Some(child);
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(5) {
            if self.command(&["PING"]).as_deref() == Ok("+PONG") {
                return Ok(());
            }
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                self.child = None;
                return Err(format!("redis-server exited at once ({status})"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.stop();
        Err(format!(
            "redis-server did not answer on port {} within 5 s",
            self.port
        ))
    }

    /// Its process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Stops it (SIGKILL: every key is gone, as after a crash).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port, empty.
    pub fn restart(&mut self) -> Result<(), String> {
        self.stop();
        self.spawn()
    }

    /// Sends one command, returns the first line of the reply (`+PONG`, `:2`, `$5`).
    pub fn command(&self, args: &[&str]) -> Result<String, String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).map_err(|e| e.to_string())?;
        stream
            .set_read_timeout(Some(Duration::from_secs(2)))
            .map_err(|e| e.to_string())?;
        let mut request = format!("*{}\r\n", args.len());
        for arg in args {
            request.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
        }
        stream
            .write_all(request.as_bytes())
            .map_err(|e| e.to_string())?;
        let mut reply = Vec::new();
        let mut byte = [0u8];
        while !reply.ends_with(b"\r\n") {
            match stream.read(&mut byte) {
                Ok(1) => reply.push(byte[0]),
                Ok(_) => return Err("connection closed".into()),
                Err(e) => return Err(e.to_string()),
            }
        }
        reply.truncate(reply.len() - 2);
        String::from_utf8(reply).map_err(|e| e.to_string())
    }

    /// An integer reply (`ZCARD key`, `DBSIZE`).
    pub fn integer(&self, args: &[&str]) -> i64 {
        let reply = self.command(args).unwrap_or_default();
        reply
            .strip_prefix(':')
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{args:?} answered {reply:?}"))
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A Redis Cluster of our own: `masters` servers on free loopback ports, the 16,384 slots
/// split evenly between them, no replicas. Stopped when dropped.
#[derive(Debug)]
pub struct RedisCluster {
    /// Its masters.
    pub nodes: Vec<RedisServer>,
}

impl RedisCluster {
    /// Starts one and waits until every node says the cluster is `ok`.
    pub fn start(masters: usize) -> Result<RedisCluster, String> {
        let settings = [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            "2000",
        ];
        let nodes = (0..masters)
            .map(|_| RedisServer::start_with(&settings))
            .collect::<Result<Vec<_>, _>>()?;
        let cluster = RedisCluster { nodes };
        let slots = 16_384 / masters;
        for (i, node) in cluster.nodes.iter().enumerate() {
            let first = i * slots;
            let last = if i + 1 == masters {
                16_383
            } else {
                first + slots - 1
            };
            cluster.query(
                node,
                &[
                    "CLUSTER",
                    "ADDSLOTSRANGE",
                    &first.to_string(),
                    &last.to_string(),
                ],
            )?;
        }
        // Distinct config epochs, given before the nodes meet (as `redis-cli --cluster create`
        // does): left to the cluster, two masters may share one until gossip resolves the
        // collision by bumping one of them, and a bump landing while a test moves a slot makes
        // the old owner's claim win again, the moved keys deleted from the new one.
        for (i, node) in cluster.nodes.iter().enumerate() {
            let epoch = (i + 1).to_string();
            cluster.query(node, &["CLUSTER", "SET-CONFIG-EPOCH", &epoch])?;
        }
        let first = &cluster.nodes[0];
        for node in &cluster.nodes[1..] {
            cluster.query(
                first,
                &["CLUSTER", "MEET", "127.0.0.1", &node.port.to_string()],
            )?;
        }
        let started = Instant::now();
        loop {
            let ready = cluster.nodes.iter().all(|node| {
                cluster
                    .query(node, &["CLUSTER", "INFO"])
                    .is_ok_and(|info| info.contains("cluster_state:ok"))
            });
            if ready {
                return Ok(cluster);
            }
            if started.elapsed() > Duration::from_secs(20) {
                return Err("the Redis Cluster did not come up within 20 s".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The nodes' URLs, comma-separated (`--redis-cluster`).
    pub fn urls(&self) -> String {
        self.nodes
            .iter()
            .map(RedisServer::url)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// One command to one node, its reply as text.
    pub fn query(&self, node: &RedisServer, args: &[&str]) -> Result<String, String> {
        query(node, args)
    }
}

/// A Redis master, its replica, and a Sentinel watching them under the name [`Self::NAME`]
/// (quorum 1, the master counted down after 500 ms without an answer): kill the master, and
/// the Sentinel promotes the replica. Stopped when dropped.
#[derive(Debug)]
pub struct RedisSentinel {
    /// The nodes, master first, as started (a failover swaps their roles, not their places).
    pub nodes: [RedisServer; 2],
    /// The Sentinel.
    pub sentinel: RedisServer,
}

impl RedisSentinel {
    /// The name the Sentinel knows the master by.
    pub const NAME: &'static str = "limits";

    /// Starts them and waits until the replica follows the master and the Sentinel knows it.
    pub fn start() -> Result<RedisSentinel, String> {
        let master = RedisServer::start()?;
        let port = master.port.to_string();
        let replica = RedisServer::start_with(&["--replicaof", "127.0.0.1", &port])?;
        let config = format!(
            "sentinel monitor {name} 127.0.0.1 {port} 1\n\
             sentinel down-after-milliseconds {name} 500\n\
             sentinel failover-timeout {name} 3000\n",
            name = Self::NAME
        );
        let sentinel = RedisServer::start_configured(Some(&config), &["--sentinel"])?;
        let started = RedisSentinel {
            nodes: [master, replica],
            sentinel,
        };
        let replica_port = started.nodes[1].port.to_string();
        let since = Instant::now();
        loop {
            let linked = query(&started.nodes[1], &["INFO", "replication"])
                .is_ok_and(|info| info.contains("master_link_status:up"));
            let known = query(&started.sentinel, &["SENTINEL", "REPLICAS", Self::NAME])
                .is_ok_and(|replicas| replicas.contains(&replica_port));
            if linked && known {
                return Ok(started);
            }
            if since.elapsed() > Duration::from_secs(20) {
                return Err("the replica or the Sentinel was not ready within 20 s".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The Sentinel's URL.
    pub fn url(&self) -> String {
        self.sentinel.url()
    }

    /// The port of the master the Sentinel names now.
    pub fn master_port(&self) -> Option<u16> {
        let reply = query(
            &self.sentinel,
            &["SENTINEL", "GET-MASTER-ADDR-BY-NAME", Self::NAME],
        )
        .ok()?;
        reply
            .rsplit(['"', ' ', ','])
            .find_map(|part| part.parse().ok())
    }
}

/// One command to one server, its reply as text (arrays as their debug form).
pub fn query(node: &RedisServer, args: &[&str]) -> Result<String, String> {
    let client = redis::Client::open(node.url()).map_err(|e| e.to_string())?;
    let mut connection = client.get_connection().map_err(|e| e.to_string())?;
    let mut command = redis::cmd(args[0]);
    for arg in &args[1..] {
        command.arg(*arg);
    }
    let value: redis::Value = command.query(&mut connection).map_err(|e| e.to_string())?;
    Ok(text(value))
}

fn text(value: redis::Value) -> String {
    match value {
        redis::Value::BulkString(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        redis::Value::VerbatimString { text, .. } => text,
        redis::Value::SimpleString(text) => text,
        redis::Value::Okay => "OK".to_owned(),
        redis::Value::Int(n) => n.to_string(),
        redis::Value::Array(items) => {
            let items: Vec<String> = items.into_iter().map(text).collect();
            items.join(",")
        }
        other => format!("{other:?}"),
    }
}
