-- A calendar quota's counter (see RedisQuotaCounters.java): adds ARGV[1] whatever the limit, the key
-- expiring at ARGV[2] (epoch ms); a negative amount (a refund) only to a key that exists, never below 0,
-- keeping its expiry (INCRBY keeps it). ARGV[3], if given, is the floor: the units the calling instance
-- knows the counter holds; a missing counter (Redis lost its data) is first rebuilt at it.
-- Reply:   the units used after the add.
local units = tonumber(ARGV[1])
local floor = tonumber(ARGV[3] or '')
if floor and floor > 0 and redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('SET', KEYS[1], string.format('%d', floor), 'PXAT', ARGV[2])
end
if units < 0 then
  if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
  local left = redis.call('INCRBY', KEYS[1], units)
  if left < 0 then left = redis.call('INCRBY', KEYS[1], -left) end
  return left
end
local used = redis.call('INCRBY', KEYS[1], units)
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return used
