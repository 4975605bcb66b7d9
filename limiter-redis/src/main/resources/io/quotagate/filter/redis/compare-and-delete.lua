-- Removes a key whose value no bucket can be read from (see ValueRepair.java): deletes KEYS[1] only if
-- it still holds the value read, ARGV[1] (or a value of another Redis type).
-- Reply:   1 if deleted, else 0.
local t = redis.call('TYPE', KEYS[1])['ok']
if t == 'none' then return 0 end
if t ~= 'string' or redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
