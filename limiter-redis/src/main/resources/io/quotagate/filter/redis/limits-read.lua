-- Reads the shared limits record (see RedisLimitsChannel.java).
-- KEYS[1]  the record; ARGV[1] '1' to read the body too, ARGV[2] the longest body read.
-- Reply:   {'none'}, {'type', <its type>} for a key that is not a hash, or
--          {'hash', version or false, body length[, body]}.
local ok, version = pcall(redis.call, 'HGET', KEYS[1], 'version')
if not ok then return {'type', redis.call('TYPE', KEYS[1])['ok']} end
if not version and redis.call('EXISTS', KEYS[1]) == 0 then return {'none'} end
local size = redis.call('HSTRLEN', KEYS[1], 'body')
if ARGV[1] == '1' and size > 0 and size <= tonumber(ARGV[2]) then
  return {'hash', version or false, size, redis.call('HGET', KEYS[1], 'body')}
end
return {'hash', version or false, size}
