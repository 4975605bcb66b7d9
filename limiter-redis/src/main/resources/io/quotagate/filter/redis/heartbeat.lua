-- The heartbeat (see InstanceRegistry.java), on server time so instances with skewed clocks agree:
-- announce this instance, forget the silent ones, keep the set itself expiring, count. One round trip,
-- one key: no hash tag needed on Redis Cluster, the script runs whole on the primary owning that slot.
-- KEYS[1]  the instances' sorted set; ARGV[1] this instance's id, ARGV[2] instance-ttl in ms.
-- Reply:   { the instances alive, Redis's TIME: seconds, microseconds } (the time sets each instance's
--          offset to Redis's clock, see RedisClock.java).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ttl)
redis.call('PEXPIRE', KEYS[1], ttl)
return { redis.call('ZCARD', KEYS[1]), tonumber(t[1]), tonumber(t[2]) }
