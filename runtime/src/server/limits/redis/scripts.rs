//! The Lua scripts that keep the limits in Redis. Each runs atomically on the node that holds
//! its key; those that need the time read Redis's own clock (`TIME`), so replicas whose clocks
//! disagree still agree. A script is sent once and then called by digest (`EVALSHA`), sent
//! again when Redis answers `NOSCRIPT` (after a restart).

use std::sync::LazyLock;

use redis::Script;

/// Admits a call when its bucket has room, on Redis's clock. KEYS[1] the bucket; ARGV the
/// interval and the tolerance in µs. Returns 0, or the wait in µs.
const SPEND: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local excess = tat - now - tonumber(ARGV[2])
if excess > 0 then return excess end
tat = tat + interval
redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000) + 1)
return 0
";

/// Gives one interval back to a bucket, never below now. KEYS[1] the bucket; ARGV the interval.
const REFUND: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
tat = tat - tonumber(ARGV[1])
if tat <= now then redis.call('DEL', KEYS[1]) return 0 end
redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000) + 1)
return 0
";

/// Takes a lease when fewer than `max` are live. KEYS[1] the sorted set; ARGV the lease id, its
/// time to live in ms, `max`. Returns -1 when taken, else the ms until the earliest expiry.
const ACQUIRE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  local ttl = tonumber(ARGV[2])
  redis.call('ZADD', KEYS[1], string.format('%.0f', now + ttl), ARGV[1])
  if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
  return -1
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return tonumber(first[2]) - now
";

/// Extends the leases of calls still running, of one sorted set, putting back those that are
/// gone (expired while Redis could not be reached, or lost in a failover): the set counts the
/// calls that run. KEYS[1] the set; ARGV pairs of a lease id and its time to live in ms.
/// Returns, per lease, 1 when extended, 0 when it was put back.
const RENEW: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local renewed = {}
local longest = 0
for i = 1, #ARGV, 2 do
  local id = ARGV[i]
  local ttl = tonumber(ARGV[i + 1])
  local expiry = tonumber(redis.call('ZSCORE', KEYS[1], id) or '0')
  redis.call('ZADD', KEYS[1], string.format('%.0f', now + ttl), id)
  if ttl > longest then longest = ttl end
  if expiry <= now then renewed[#renewed + 1] = 0 else renewed[#renewed + 1] = 1 end
end
if longest > 0 and redis.call('PTTL', KEYS[1]) < longest then redis.call('PEXPIRE', KEYS[1], longest) end
return renewed
";

/// Gives a lease back and tells the waiters. KEYS[1] the sorted set; ARGV the lease id, the
/// channel.
const RELEASE: &str = r"
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then redis.call('PUBLISH', ARGV[2], KEYS[1]) end
return 0
";

/// Records a round state as used, once. KEYS[1] the state's key; ARGV its time to live in ms.
/// Returns 1 when recorded now, 0 when it was already.
const ONCE: &str = r"
if redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 1 end
return 0
";

/// Each script, sent to Redis once per connection lifetime and then called by digest.
pub(super) static SCRIPTS: LazyLock<Scripts> = LazyLock::new(|| Scripts {
    spend: Script::new(SPEND),
    refund: Script::new(REFUND),
    acquire: Script::new(ACQUIRE),
    renew: Script::new(RENEW),
    release: Script::new(RELEASE),
    once: Script::new(ONCE),
});

pub(super) struct Scripts {
    pub(super) spend: Script,
    pub(super) refund: Script,
    pub(super) acquire: Script,
    pub(super) renew: Script,
    pub(super) release: Script,
    pub(super) once: Script,
}
