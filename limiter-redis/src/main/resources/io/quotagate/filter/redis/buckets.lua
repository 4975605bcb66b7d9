-- quotagate's token buckets in Redis: one script call decides one operation on every key it names,
-- atomically (see BucketScript.java for the contract).
--
-- ARGV[1]  the operation: 't' take (all or none), 'l' look (waits, writes nothing), 'r' refund,
--          'f' force (take, into debt if need be), 'a' available (read), 'm' move (to the limits given)
-- ARGV[2]  units
-- ARGV[3]  now: the calling instance's wall clock, microseconds since 1970 (exact as a Lua double below
--          2^53, the year 2255); a bucket's time never goes back (an instance behind it refills nothing)
-- per key i (1-based), ARGV[2 + 2i] = its limits 'name,capacity,refill,periodMicros|...' and
--          ARGV[3 + 2i] = what this instance last saw of it, 'atMicros|tokens,tokens...' or ''.
-- A key whose limits start with '#' is a calendar quota's counter in one period:
--          '#limit,expiresAtMillis,waitMicros' (the wait until its period ends, on the calendar's clock);
--          its value is the units used, an integer (as INCRBY keeps
--          it), it holds limit - used units, refills nothing, and a refused request waits until the reset.
-- A value:  'q2<limits>;' then, packed as big-endian doubles, the time (micros) and each bandwidth's
--          tokens (doubles: refill is continuous); packed, not printed, as formatting costs more than the
--          rest of the script.
-- Reply:   { 1 if done (taken) else 0, now, then per key: repaired (0/1), wait (micros until the units
--          fit; 0 if they fit now; -1 never), n, the n bandwidths' tokens (rounded down) }
local op = ARGV[1]
local units = tonumber(ARGV[2])
local now = tonumber(ARGV[3])

local function limitsOf(spec)
  local bs = {}
  for part in string.gmatch(spec, '[^|]+') do
    local name, cap, refill, period = string.match(part, '^([^,]*),([^,]+),([^,]+),([^,]+)$')
    cap, refill, period = tonumber(cap), tonumber(refill), tonumber(period)
    if not (cap and refill and period) or refill <= 0 or period <= 0 then return nil end
    bs[#bs + 1] = { name = name, cap = cap, refill = refill, period = period }
  end
  if #bs == 0 then return nil end
  return bs
end

-- the bucket's state now: read (refilled up to now), or created (full, or from what was seen), or
-- replaced when the value is none of ours; fresh = not in Redis yet
local function load(key, spec, seen)
  local ok, v = pcall(redis.call, 'GET', key)
  local st
  local repaired = 0
  if ok and v then
    local semi = string.sub(v, 1, 2) == 'q2' and string.find(v, ';', 3, true)
    local lspec = semi and string.sub(v, 3, semi - 1)
    local bs = lspec and (lspec == spec and limitsOf(spec) or limitsOf(lspec))
    if bs and #v == semi + 8 * (#bs + 1) then
      local packed = { struct.unpack('>' .. string.rep('d', #bs + 1), v, semi + 1) }
      st = { at = packed[1], spec = lspec, bs = bs, tok = {} }
      for i = 1, #bs do st.tok[i] = packed[i + 1] end
    end
    if not st then repaired = 1 end
  elseif not ok then
    repaired = 1 -- a hash, a list...: another type than ours
  end
  if st then
    local elapsed = math.max(0, now - st.at)
    for i, b in ipairs(st.bs) do
      st.tok[i] = math.min(b.cap, st.tok[i] + elapsed * b.refill / b.period)
    end
    st.at = math.max(st.at, now)
    st.repaired = 0
    return st
  end
  local bs = limitsOf(spec)
  st = { at = now, spec = spec, bs = bs, tok = {}, fresh = true, repaired = repaired }
  local sat, stoks = string.match(seen, '^(%d+)|(.+)$')
  local old = {}
  if sat then for x in string.gmatch(stoks, '[^,]+') do old[#old + 1] = tonumber(x) end end
  -- a key lost (Redis restarted empty, a failover to a replica that lagged) is created as this instance
  -- last saw it, refilled since: no fresh burst; a debt counts as empty
  local since = sat and math.max(0, now - tonumber(sat)) or 0
  for i, b in ipairs(bs) do
    if sat and #old == #bs then
      st.tok[i] = math.max(0, math.min(b.cap, old[i] + math.floor(since * b.refill / b.period)))
    else
      st.tok[i] = b.cap
    end
  end
  return st
end

local function counterOf(key, spec)
  local limit, expires, waitToReset = string.match(spec, '^#(%d+),(%d+),(%d+)$')
  local ok, v = pcall(redis.call, 'GET', key)
  local st = { counter = true, limit = tonumber(limit), expires = expires, waitToReset = tonumber(waitToReset),
               used = 0, fresh = true, repaired = 0 }
  if not ok then
    st.repaired = 1 -- another type than a counter's
  elseif v then
    local used = tonumber(v)
    if used then st.used, st.fresh = used, false else st.repaired = 1 end
  end
  return st
end

local function wait(st)
  if st.counter then
    if units > st.limit then return -1 end
    if st.used + units > st.limit then return st.waitToReset end
    return 0
  end
  local longest = 0
  for i, b in ipairs(st.bs) do
    if units > b.cap then return -1 end
    local missing = units - st.tok[i]
    if missing > 0 then longest = math.max(longest, math.ceil(missing * b.period / b.refill)) end
  end
  return longest
end

local function save(key, st)
  local ttl = 0
  for i, b in ipairs(st.bs) do
    ttl = math.max(ttl, (b.cap - st.tok[i]) * b.period / b.refill)
  end
  -- kept 10 s after it would be full again: a full bucket and a missing one are the same
  redis.call('SET', key, 'q2' .. st.spec .. ';' .. struct.pack('>' .. string.rep('d', #st.bs + 1), st.at,
      unpack(st.tok)), 'PX', math.ceil(ttl / 1000) + 10000)
end

-- AS_IS: each bandwidth keeps its tokens (matched by name) capped at its new capacity; a new one is full
local function move(st, spec)
  local bs = limitsOf(spec)
  local byName = {}
  for i, b in ipairs(st.bs) do byName[b.name] = st.tok[i] end
  local tok = {}
  for i, b in ipairs(bs) do
    local had = byName[b.name]
    tok[i] = had and math.min(b.cap, had) or b.cap
  end
  st.spec, st.bs, st.tok = spec, bs, tok
end

local states = {}
local done = 1
local function counterStep(key, st)
  if op == 't' and done == 1 or op == 'f' then
    st.used = st.used + units
    redis.call('SET', key, string.format('%d', st.used), 'PXAT', st.expires)
  elseif op == 'r' and not st.fresh then
    st.used = math.max(0, st.used - units)
    redis.call('SET', key, string.format('%d', st.used), 'KEEPTTL')
  elseif st.repaired == 1 and op ~= 'l' and op ~= 'a' then
    redis.call('SET', key, string.format('%d', st.used), 'PXAT', st.expires)
  end
end

for k = 1, #KEYS do
  local spec = ARGV[2 + 2 * k]
  local st
  if string.sub(spec, 1, 1) == '#' then st = counterOf(KEYS[k], spec) else st = load(KEYS[k], spec, ARGV[3 + 2 * k]) end
  states[k] = st
  st.wait = wait(st)
  if st.wait ~= 0 then done = 0 end
end

for k = 1, #KEYS do
  local st = states[k]
  local write = st.repaired == 1
  if st.counter then
    counterStep(KEYS[k], st)
    write = false
  elseif op == 't' then
    if done == 1 then
      for i = 1, #st.tok do st.tok[i] = st.tok[i] - units end
      write = true
    end
  elseif op == 'f' then
    for i = 1, #st.tok do st.tok[i] = st.tok[i] - units end
    write = true
  elseif op == 'r' then
    if not st.fresh then
      for i, b in ipairs(st.bs) do st.tok[i] = math.min(b.cap, st.tok[i] + units) end
      write = true
    end
  elseif op == 'm' then
    if not st.fresh and st.spec ~= ARGV[2 + 2 * k] then
      move(st, ARGV[2 + 2 * k])
      write = true
    end
  elseif op == 'l' or op == 'a' then
    write = false
  else
    return redis.error_reply('ERR quotagate buckets: unknown operation ' .. tostring(op))
  end
  if write then save(KEYS[k], st) end
end

local reply = { (op == 't' and done) or 1, now }
for k = 1, #KEYS do
  local st = states[k]
  reply[#reply + 1] = st.repaired
  reply[#reply + 1] = st.wait
  if st.counter then
    reply[#reply + 1] = 1
    reply[#reply + 1] = st.limit - st.used
  else
    reply[#reply + 1] = #st.bs
    for i = 1, #st.bs do reply[#reply + 1] = math.floor(st.tok[i]) end
  end
end
return reply
