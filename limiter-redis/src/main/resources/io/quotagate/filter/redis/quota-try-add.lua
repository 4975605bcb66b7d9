-- A calendar quota's counter (see RedisQuotaCounters.java): adds ARGV[1] if the sum stays within
-- ARGV[2]; the key expires at ARGV[3] (epoch ms).
-- Reply:   the units used after the add, or -1 - used if the add would pass the limit.
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local units = tonumber(ARGV[1])
if used + units > tonumber(ARGV[2]) then return -1 - used end
used = redis.call('INCRBY', KEYS[1], units)
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
return used
