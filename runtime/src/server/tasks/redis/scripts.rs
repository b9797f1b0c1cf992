//! The Lua scripts that keep tasks in Redis. Each runs atomically on the node that holds its
//! keys (a task's keys share one hash tag, so one slot of a cluster) and reads Redis's own
//! clock (`TIME`), so replicas whose clocks disagree still agree on leases and expiries.
//!
//! A task is a hash, `{prefix}:task:{<hash>}`, with the fields:
//!
//! | field | holds |
//! |---|---|
//! | `o` | the owner: a hash of the task id and the caller's key |
//! | `s` | `working`, `completed`, `failed` or `cancelled` (`input_required` is `working` with questions pending) |
//! | `c`, `u`, `x` | created (the server's `createdAt`), last updated (Redis's clock, never before `c`), expires (Redis's clock): ms since the epoch |
//! | `t`, `p` | `ttlMs`, `pollIntervalMs` |
//! | `l` | the running replica's lease, until when (ms) |
//! | `m` | the status message, if any |
//! | `r` | the result (`completed`) or the JSON-RPC error (`failed`), as JSON |
//!
//! beside it `…:q`, the questions pending (key → request as JSON), and `…:a`, the answers not
//! yet taken by the running replica (key → value as JSON). Every key of a task expires when
//! the task does (`PEXPIREAT x`), whatever its status. A task whose lease lapsed while it was
//! `working` is turned `failed` (with the orphaned error handed in) by the first script that
//! finds it so: read, answered, cancelled, recorded or renewed.

use std::sync::LazyLock;

use redis::Script;

/// Shared by the scripts on a task, whose KEYS are the task, its questions, its answers and
/// whose first two ARGV are the orphaned error (JSON) and message: `now` in ms on Redis's
/// clock, and `lapse()`, which turns a `working` task whose lease has lapsed `failed` with
/// them (true when it did).
const PRELUDE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function ms(n) return string.format('%.0f', n) end
local function stamp()
  local created = tonumber(redis.call('HGET', KEYS[1], 'c') or '0')
  if created > now then return ms(created) end
  return ms(now)
end
local function lapse()
  if redis.call('HGET', KEYS[1], 's') ~= 'working' then return false end
  if tonumber(redis.call('HGET', KEYS[1], 'l') or '0') >= now then return false end
  redis.call('HSET', KEYS[1], 's', 'failed', 'r', ARGV[1], 'm', ARGV[2], 'u', stamp())
  redis.call('HDEL', KEYS[1], 'l')
  redis.call('DEL', KEYS[2], KEYS[3])
  return true
end
";

/// Counts a task against its caller's cap and the store's. KEYS the caller's sorted set and
/// the store's (task hash → its expiry; one hash tag, one slot); ARGV the task's hash, its ttl
/// in ms, the caller's cap, the store's. Returns 1 when counted, 0 when the caller holds its
/// cap already, -1 when the store holds its own.
const COUNT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 1, 2 do redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now) end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return -1 end
for i = 1, 2 do
  redis.call('ZADD', KEYS[i], string.format('%.0f', now + tonumber(ARGV[2])), ARGV[1])
  local last = redis.call('ZRANGE', KEYS[i], -1, -1, 'WITHSCORES')
  redis.call('PEXPIREAT', KEYS[i], last[2])
end
return 1
";

/// Takes a task back off the counts (its creation failed). KEYS the caller's sorted set and
/// the store's; ARGV the task's hash.
const UNCOUNT: &str = r"
for i = 1, 2 do redis.call('ZREM', KEYS[i], ARGV[1]) end
return 0
";

/// Creates a task, `working`, leased. KEYS the task; ARGV (after the prelude's two) the owner,
/// the ttl, the poll interval and the lease in ms, and when the server created it (ms since the
/// epoch, its `createdAt`). Returns 1, or 0 when the id is taken.
const CREATE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local expires = now + tonumber(ARGV[4])
redis.call('HSET', KEYS[1], 'o', ARGV[3], 's', 'working', 'c', ARGV[7], 'u', ARGV[7],
  'x', ms(expires), 't', ARGV[4], 'p', ARGV[5], 'l', ms(now + tonumber(ARGV[6])))
redis.call('PEXPIREAT', KEYS[1], ms(expires))
return 1
";

/// Reads a task. ARGV (after the prelude's two) the owner. Returns nil when there is none of
/// this owner, else `{s, c, u, t, p, m, r, questions}` (`m` and `r` false when absent,
/// `questions` flat key/value pairs).
const GET: &str = r"
if redis.call('HGET', KEYS[1], 'o') ~= ARGV[3] then return false end
lapse()
local f = redis.call('HMGET', KEYS[1], 's', 'c', 'u', 't', 'p', 'm', 'r')
return {f[1], f[2], f[3], f[4], f[5], f[6] or false, f[7] or false, redis.call('HGETALL', KEYS[2])}
";

/// Answers a task's questions. ARGV (after the prelude's two) the owner, the channel, the
/// task's hash, then pairs of a question's key and its answer as JSON. An answer to a question
/// not pending is dropped. Returns 0 when there is no task of this owner, 1 otherwise.
const ANSWER: &str = r"
if redis.call('HGET', KEYS[1], 'o') ~= ARGV[3] then return 0 end
lapse()
if redis.call('HGET', KEYS[1], 's') ~= 'working' then return 1 end
local taken = 0
for i = 6, #ARGV, 2 do
  if redis.call('HDEL', KEYS[2], ARGV[i]) == 1 then
    redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1])
    taken = taken + 1
  end
end
if taken > 0 then
  redis.call('PEXPIREAT', KEYS[3], redis.call('HGET', KEYS[1], 'x'))
  redis.call('HSET', KEYS[1], 'u', stamp())
  redis.call('PUBLISH', ARGV[4], ARGV[5])
end
return 1
";

/// Cancels a task not yet terminal. ARGV (after the prelude's two) the owner, the channel, the
/// task's hash. Returns 0 when there is no task of this owner, 1 otherwise.
const CANCEL: &str = r"
if redis.call('HGET', KEYS[1], 'o') ~= ARGV[3] then return 0 end
lapse()
if redis.call('HGET', KEYS[1], 's') == 'working' then
  redis.call('HSET', KEYS[1], 's', 'cancelled', 'u', stamp())
  redis.call('HDEL', KEYS[1], 'l')
  redis.call('DEL', KEYS[2], KEYS[3])
  redis.call('PUBLISH', ARGV[4], ARGV[5])
end
return 1
";

/// Whether the running side of a task goes on: 0 running, 1 cancelled, 2 gone (terminal,
/// expired, or its lease lapsed).
const STANDING: &str = r"
local function standing()
  if redis.call('EXISTS', KEYS[1]) == 0 then return 2 end
  if lapse() then return 2 end
  local s = redis.call('HGET', KEYS[1], 's')
  if s == 'cancelled' then return 1 end
  if s ~= 'working' then return 2 end
  return 0
end
";

/// Records what a running task did. ARGV (after the prelude's two) what, then its data: `m`
/// and a message (`""` for none; nothing changes while questions are pending), `q` and pairs of a
/// question's key and request as JSON (replacing those pending), `completed` or `failed` and
/// the result or error as JSON. Returns as `standing()`, 0 when recorded.
const RECORD: &str = r"
local held = standing()
if held ~= 0 then return held end
local what = ARGV[3]
if what == 'm' then
  if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
  if ARGV[4] == '' then redis.call('HDEL', KEYS[1], 'm') else redis.call('HSET', KEYS[1], 'm', ARGV[4]) end
elseif what == 'q' then
  redis.call('DEL', KEYS[2])
  redis.call('HDEL', KEYS[1], 'm')
  for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
  redis.call('PEXPIREAT', KEYS[2], redis.call('HGET', KEYS[1], 'x'))
else
  redis.call('HSET', KEYS[1], 's', what, 'r', ARGV[4])
  redis.call('HDEL', KEYS[1], 'l', 'm')
  redis.call('DEL', KEYS[2], KEYS[3])
end
redis.call('HSET', KEYS[1], 'u', stamp())
return 0
";

/// Renews the running replica's lease. ARGV (after the prelude's two) the lease in ms.
/// Returns as `standing()`.
const RENEW: &str = r"
local held = standing()
if held == 0 then redis.call('HSET', KEYS[1], 'l', ms(now + tonumber(ARGV[3]))) end
return held
";

/// Takes the answers delivered, once no question is pending. Returns nil when there is no
/// task or a question is pending, else the answers as flat pairs (none, maybe).
const TAKE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
lapse()
if redis.call('EXISTS', KEYS[2]) == 1 then return false end
local answers = redis.call('HGETALL', KEYS[3])
redis.call('DEL', KEYS[3])
return answers
";

/// Each script, sent to Redis once per connection lifetime and then called by digest
/// (`EVALSHA`, sent again after `NOSCRIPT`).
pub(super) static SCRIPTS: LazyLock<Scripts> = LazyLock::new(|| {
    let with = |parts: &[&str]| Script::new(&parts.concat());
    Scripts {
        count: Script::new(COUNT),
        uncount: Script::new(UNCOUNT),
        create: with(&[PRELUDE, CREATE]),
        get: with(&[PRELUDE, GET]),
        answer: with(&[PRELUDE, ANSWER]),
        cancel: with(&[PRELUDE, CANCEL]),
        record: with(&[PRELUDE, STANDING, RECORD]),
        renew: with(&[PRELUDE, STANDING, RENEW]),
        take: with(&[PRELUDE, TAKE]),
    }
});

pub(super) struct Scripts {
    pub(super) count: Script,
    pub(super) uncount: Script,
    pub(super) create: Script,
    pub(super) get: Script,
    pub(super) answer: Script,
    pub(super) cancel: Script,
    pub(super) record: Script,
    pub(super) renew: Script,
    pub(super) take: Script,
}
