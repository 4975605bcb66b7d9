-- Replaces the shared limits record if it holds the expected version (see RedisLimitsChannel.java).
-- KEYS[1]  the record; ARGV: the expected version ('0': none, 'damaged', or its digits), the next
--          version, the body, the channel.
-- The stored version is classified as text, as RedisLimitsChannel.parseVersion does (never as a Lua
-- number, a double); a match replaces the whole key (no stray field survives) and announces it.
-- Reply:   1, or 0.
local ok, cur = pcall(redis.call, 'HGET', KEYS[1], 'version')
local state = '0'
if not ok then
  state = 'damaged'
elseif cur then
  if string.find(cur, '^[1-9]%d*$') and (#cur < 16 or (#cur == 16 and cur <= '9007199254740991')) then
    state = cur
  else
    state = 'damaged'
  end
elseif redis.call('EXISTS', KEYS[1]) == 1 then
  state = 'damaged'
end
if state ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'version', ARGV[2], 'body', ARGV[3])
redis.call('PUBLISH', ARGV[4], 'v')
return 1
