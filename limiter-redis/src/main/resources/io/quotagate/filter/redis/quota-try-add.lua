-- A calendar quota's counter (see RedisQuotaCounters.java): adds ARGV[1] if the sum stays within
-- ARGV[2]; the key expires at ARGV[3] (epoch ms). ARGV[4], if given, is the floor: the units the calling
-- instance knows the counter holds; a missing counter (Redis lost its data: a restart without
-- persistence, FLUSHALL, a failover to a replica that lagged) is first rebuilt at it, so a period's units
-- are never granted twice.
-- Reply:   the units used after the add, or -1 - used if the add would pass the limit.
local v = redis.call('GET', KEYS[1])
local floor = tonumber(ARGV[4] or '')
if not v and floor and floor > 0 then
  redis.call('SET', KEYS[1], string.format('%d', floor), 'PXAT', ARGV[3])
  v = floor
end
local used = tonumber(v or '0')
local units = tonumber(ARGV[1])
if used + units > tonumber(ARGV[2]) then return -1 - used end
used = redis.call('INCRBY', KEYS[1], units)
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
return used
