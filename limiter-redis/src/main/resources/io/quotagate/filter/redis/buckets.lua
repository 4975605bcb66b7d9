-- quotagate's token buckets in Redis: one script call decides, in order, one or more operations, each
-- on the keys it names, atomically (see BucketScript.java for the contract).
--
-- KEYS     the distinct keys of the call's operations
-- ARGV[1]  now: the calling instance's wall clock, microseconds since 1970 (exact as a Lua double below
--          2^53, the year 2255); a bucket's time never goes back (an instance behind it refills nothing)
-- per key k (1-based), ARGV[2k] = its limits 'name,capacity,refill,periodMicros[,a]|...' (a: the algorithm,
--          'g' a GCRA cell, 's' a sliding window; none: a token bucket) and
--          ARGV[2k + 1] = what the instance last saw of it, 'atMicros|tokens,tokens...' or ''.
--          A key whose limits start with '#' is a calendar quota's counter in one period:
--          '#limit,expiresAtMillis,waitMicros' (the wait until its period ends, on the calendar's clock);
--          its value is the units used, an integer (as INCRBY keeps it), it holds limit - used units,
--          refills nothing, and a refused request waits until the reset. Its ARGV[2k + 1] is its floor,
--          the units the instance knows it holds, or '': a missing counter (Redis lost its data) is
--          rebuilt at the floor by the first operation that writes, so no unit is granted twice.
-- then per operation, from ARGV[2 + 2 #KEYS]: its letter, its units, m, and the indexes (into KEYS) of
--          its m keys. Letters: 't' take (all or none), 'l' look (waits, writes nothing), 'r' refund,
--          'f' force (take, into debt if need be), 'a' available (read), 'm' move (to the limits given
--          as the key's limits: a move is never sent with other operations), 'w' reserve: its units
--          written 'units/maxWaitMicros', take (all or none, into debt) if every key's wait is at most
--          maxWaitMicros, a counter's 0 (a throttled request, resumed after the longest wait, is not
--          charged again); the waits replied are those before the take, the request's delay per key.
-- A value:  'q2<limits>;' then, packed as big-endian doubles, the time (micros) and each bandwidth's
--          state (doubles: refill is continuous): a token bucket's tokens; a GCRA cell's theoretical arrival
--          time less the value's time (micros: kept relative, as an absolute time of about 1.8e15 micros holds
--          only quarters of a microsecond, and a cell of millions of units a second would count too few);
--          in the script, a cell's state is its arrival time less now; a sliding window's newest sub-window number then its SLOTS + 1 sub-window counters
--          (a sub-window is periodMicros / SLOTS rounded up). Packed, not printed, as formatting costs more than
--          the rest of the script. Each key is read once and written at most once per call.
--          Moving a bandwidth to another algorithm keeps its units left (see docs/algorithms.md).
-- Reply:   { now, then per operation: 1 if done (taken) else 0, then per key of it: repaired (0/1; 2 for a
--          counter rebuilt at its floor),
--          wait (micros until the units fit; 0 if they fit now; -1 never), n, the n bandwidths' tokens
--          after the operation (rounded down) }
local now = tonumber(ARGV[1])
local nkeys = #KEYS
local floor, ceil, min, max = math.floor, math.ceil, math.min, math.max
local call, find, sub = redis.call, string.find, string.sub
local FORMATS = { '>dd', '>ddd', '>dddd' }
local SLOTS = 10

-- names, capacities, refills, periods of 'name,cap,refill,period|...', or nil if malformed
local function parse(spec)
  local names, caps, refills, periods, algs, slots = {}, {}, {}, {}, {}, {}
  local n, at, len, width, simple = 0, 1, #spec, 0, true
  while at <= len do
    local _, e, name, cap, refill, period = find(spec, '^([^,|]*),([^,|]+),([^,|]+),([^,|]+)', at)
    if not e then return nil end
    cap, refill, period = tonumber(cap), tonumber(refill), tonumber(period)
    if not (cap and refill and period) or refill <= 0 or period <= 0 then return nil end
    n = n + 1
    names[n], caps[n], refills[n], periods[n] = name, cap, refill, period
    algs[n] = 't'
    at = e + 1
    if sub(spec, at, at) == ',' then
      local a = sub(spec, at + 1, at + 1)
      if a ~= 'g' and a ~= 's' then return nil end
      algs[n], simple = a, false
      at = at + 2
    end
    if algs[n] == 's' then
      slots[n] = ceil(period / SLOTS)
      width = width + 2 + SLOTS
    else
      width = width + 1
    end
    if at <= len then
      if sub(spec, at, at) ~= '|' then return nil end
      at = at + 1
    end
  end
  if n == 0 then return nil end
  -- head: how a value with these limits starts; fmt: how its numbers are packed
  return { n = n, names = names, caps = caps, refills = refills, periods = periods, algs = algs, slots = slots,
           simple = simple, width = width, window = width > n,
           head = 'q2' .. spec .. ';', fmt = simple and FORMATS[n] or ('>' .. string.rep('d', width + 1)) }
end

-- parsed once per call: the keys of one plan share their limits
local parsed = {}
local function limitsOf(spec)
  local ls = parsed[spec]
  if ls == nil then
    ls = parse(spec) or false
    parsed[spec] = ls
  end
  return ls or nil
end

-- a sliding window moved on to the sub-window of now, its passed sub-windows emptied
local function roll(win, slot)
  local cur = floor(now / slot)
  if cur <= win.newest then return end
  if cur - win.newest > SLOTS then
    for j = 1, SLOTS + 1 do win.c[j] = 0 end
  else
    for s = win.newest + 1, cur do win.c[(s % (SLOTS + 1)) + 1] = 0 end
  end
  win.newest = cur
end

local function counted(win)
  local sum = 0
  for j = 1, SLOTS + 1 do sum = sum + win.c[j] end
  return sum
end

-- units left in lane i: a token bucket's tokens, a GCRA cell's capacity less the units its arrival time is
-- ahead of now (rounded up), a sliding window's capacity less what its window counts
local function left(st, i)
  local ls = st.ls
  local a = ls.algs[i]
  if a == 't' then return st.tok[i] end
  if a == 'g' then
    local ahead = st.tok[i]
    if ahead <= 0 then return ls.caps[i] end
    return ls.caps[i] - ceil(ahead * ls.refills[i] / ls.periods[i] - 1e-9)
  end
  return ls.caps[i] - counted(st.win[i])
end

-- lane i of a state at limits ls holding `units` left (capped at its capacity): a token bucket holds them, a
-- GCRA cell's arrival time is ahead of now by the units spent, a sliding window counts them in its sub-window
local function fillLane(st, ls, i, units)
  local cap = ls.caps[i]
  units = min(cap, units)
  local a = ls.algs[i]
  if a == 't' then
    st.tok[i] = units
  elseif a == 'g' then
    st.tok[i] = max(0, cap - units) * ls.periods[i] / ls.refills[i]
  else
    local win = { newest = floor(now / ls.slots[i]), c = {} }
    for j = 1, SLOTS + 1 do win.c[j] = 0 end
    win.c[(win.newest % (SLOTS + 1)) + 1] = max(0, cap - units)
    st.win[i] = win
  end
end

-- the bucket's state now: read (refilled up to now), or created (full, or from what was seen), or
-- replaced when the value is none of ours; fresh = not in Redis yet
local function load(key, spec, seen)
  local ok, v = pcall(call, 'GET', key)
  local repaired = 0
  if ok and v then
    -- the value's limits: most often the caller's (compared whole, not parsed), else parsed
    local ls, lspec, semi = limitsOf(spec), spec, nil
    local head = ls and ls.head
    if head and sub(v, 1, #head) == head then
      semi = #head
    elseif sub(v, 1, 2) == 'q2' then
      semi = find(v, ';', 3, true)
      if semi then
        lspec = sub(v, 3, semi - 1)
        ls = limitsOf(lspec)
      end
    end
    if semi and ls and not ls.simple and #v == semi + 8 * (ls.width + 1) then
      local packed = { struct.unpack(ls.fmt, v, semi + 1) }
      local at = packed[1]
      local tok, win, p = {}, {}, 2
      local elapsed = now - at
      if elapsed < 0 then elapsed = 0 else at = now end
      for i = 1, ls.n do
        local a = ls.algs[i]
        if a == 's' then
          local w = { newest = packed[p], c = {} }
          for j = 1, SLOTS + 1 do w.c[j] = packed[p + j] end
          p = p + 2 + SLOTS
          roll(w, ls.slots[i])
          win[i] = w
        elseif a == 'g' then
          tok[i] = packed[p] + (packed[1] - now) -- ahead of the value's time, to ahead of now
          p = p + 1
        else
          tok[i] = min(ls.caps[i], packed[p] + elapsed * ls.refills[i] / ls.periods[i])
          p = p + 1
        end
      end
      return { at = at, spec = lspec, ls = ls, tok = tok, win = win, repaired = 0 }
    end
    if semi and ls and ls.simple and #v == semi + 8 * (ls.n + 1) then
      local tok, caps, refills, periods = {}, ls.caps, ls.refills, ls.periods
      local at
      if ls.n == 1 then
        at, tok[1] = struct.unpack('>dd', v, semi + 1)
      else
        local packed = { struct.unpack(ls.fmt, v, semi + 1) }
        at = packed[1]
        for i = 1, ls.n do tok[i] = packed[i + 1] end
      end
      local elapsed = now - at
      if elapsed < 0 then elapsed = 0 else at = now end
      for i = 1, ls.n do
        tok[i] = min(caps[i], tok[i] + elapsed * refills[i] / periods[i])
      end
      return { at = at, spec = lspec, ls = ls, tok = tok, repaired = 0 }
    end
    repaired = 1
  elseif not ok then
    repaired = 1 -- a hash, a list...: another type than ours
  end
  local ls = limitsOf(spec)
  local st = { at = now, spec = spec, ls = ls, tok = {}, win = {}, fresh = true, repaired = repaired }
  local sat, stoks = string.match(seen, '^(%d+)|(.+)$')
  local old = {}
  if sat then for x in string.gmatch(stoks, '[^,]+') do old[#old + 1] = tonumber(x) end end
  -- a key lost (Redis restarted empty, a failover to a replica that lagged) is created as this instance
  -- last saw it, refilled since: no fresh burst; a debt counts as empty
  local since = sat and max(0, now - tonumber(sat)) or 0
  for i = 1, ls.n do
    local units = ls.caps[i]
    if sat and #old == ls.n then
      if ls.algs[i] == 's' then
        -- a window's units come back at once when their sub-window leaves it: none before a period has passed
        units = since >= ls.periods[i] + ls.slots[i] and ls.caps[i] or max(0, old[i])
      else
        units = max(0, min(ls.caps[i], old[i] + floor(since * ls.refills[i] / ls.periods[i])))
      end
    end
    fillLane(st, ls, i, units)
  end
  return st
end

-- repaired: 1 if the value was none of ours, 2 if a missing counter was rebuilt at its floor
local function counterOf(key, spec, floor)
  local limit, expires, waitToReset = string.match(spec, '^#(%d+),(%d+),(%d+)$')
  local ok, v = pcall(call, 'GET', key)
  local st = { counter = true, limit = tonumber(limit), expires = expires, waitToReset = tonumber(waitToReset),
               used = 0, fresh = true, repaired = 0 }
  if not ok then
    st.repaired = 1 -- another type than a counter's
  elseif v then
    local used = tonumber(v)
    if used then st.used, st.fresh = used, false else st.repaired = 1 end
  else
    local f = tonumber(floor)
    if f and f > 0 then st.used, st.fresh, st.restored, st.repaired = f, false, true, 2 end
  end
  return st
end

local function wait(st, units)
  if st.counter then
    if units > st.limit then return -1 end
    if st.used + units > st.limit then return st.waitToReset end
    return 0
  end
  local longest = 0
  local ls, tok = st.ls, st.tok
  for i = 1, ls.n do
    if units > ls.caps[i] then return -1 end
    local a = ls.algs[i]
    if a == 't' then
      local missing = units - tok[i]
      if missing > 0 then longest = max(longest, ceil(missing * ls.periods[i] / ls.refills[i])) end
    elseif a == 'g' then
      -- fits once now >= TAT - (capacity - units) x period / refill
      local w = tok[i] - (ls.caps[i] - units) * ls.periods[i] / ls.refills[i]
      if w > 0 then longest = max(longest, ceil(w - 1e-9)) end
    else
      -- the oldest sub-windows leave the window in turn
      local win, cap, slot = st.win[i], ls.caps[i], ls.slots[i]
      local sum = counted(win)
      if sum + units > cap then
        for s = win.newest - SLOTS, win.newest do
          sum = sum - win.c[(s % (SLOTS + 1)) + 1]
          if sum + units <= cap then
            longest = max(longest, (s + SLOTS + 1) * slot - now)
            break
          end
        end
      end
    end
  end
  return longest
end

local function save(key, st)
  local ttl = 0
  local ls, tok = st.ls, st.tok
  if not ls.simple then
    local packed = { st.at }
    for i = 1, ls.n do
      local a = ls.algs[i]
      if a == 't' then
        ttl = max(ttl, (ls.caps[i] - tok[i]) * ls.periods[i] / ls.refills[i])
        packed[#packed + 1] = tok[i]
      elseif a == 'g' then
        ttl = max(ttl, tok[i])
        packed[#packed + 1] = tok[i] + (now - st.at) -- ahead of the value's time
      else
        local win = st.win[i]
        ttl = max(ttl, (win.newest + SLOTS + 1) * ls.slots[i] - now)
        packed[#packed + 1] = win.newest
        for j = 1, SLOTS + 1 do packed[#packed + 1] = win.c[j] end
      end
    end
    call('SET', key, ls.head .. struct.pack(ls.fmt, unpack(packed)), 'PX', ceil(ttl / 1000) + 10000)
    return
  end
  for i = 1, ls.n do
    ttl = max(ttl, (ls.caps[i] - tok[i]) * ls.periods[i] / ls.refills[i])
  end
  -- kept 10 s after it would be full again: a full bucket and a missing one are the same
  local packed
  if ls.n == 1 then packed = struct.pack('>dd', st.at, tok[1]) else packed = struct.pack(ls.fmt, st.at, unpack(tok)) end
  call('SET', key, ls.head .. packed, 'PX', ceil(ttl / 1000) + 10000)
end

-- AS_IS: each bandwidth keeps its units left (matched by name) capped at its new capacity, as its new
-- algorithm counts them; one whose algorithm and figures did not change keeps its state; a new one is full
local function move(st, spec)
  local ls = limitsOf(spec)
  local old = st.ls
  local byName, same = {}, {}
  for i = 1, old.n do
    byName[old.names[i]] = i
  end
  local moved = { tok = {}, win = {} }
  for i = 1, ls.n do
    local o = byName[ls.names[i]]
    if o and old.algs[o] == ls.algs[i] and (ls.algs[i] == 't' or (old.caps[o] == ls.caps[i]
        and old.refills[o] == ls.refills[i] and old.periods[o] == ls.periods[i])) then
      if ls.algs[i] == 't' then moved.tok[i] = min(ls.caps[i], st.tok[o])
      elseif ls.algs[i] == 'g' then moved.tok[i] = st.tok[o]
      else moved.win[i] = st.win[o] end
    else
      fillLane(moved, ls, i, o and left(st, o) or ls.caps[i])
    end
  end
  st.spec, st.ls, st.tok, st.win = spec, ls, moved.tok, moved.win
end

-- takes units from every lane (into debt if need be: a token bucket's tokens below 0, a GCRA cell's arrival
-- time further ahead, a sliding window's count above its capacity)
local function takeUnits(st, units)
  local ls, tok = st.ls, st.tok
  for i = 1, ls.n do
    local a = ls.algs[i]
    if a == 't' then tok[i] = tok[i] - units
    elseif a == 'g' then tok[i] = max(tok[i], 0) + units * ls.periods[i] / ls.refills[i]
    else
      local win = st.win[i]
      local at = (win.newest % (SLOTS + 1)) + 1
      win.c[at] = win.c[at] + units
    end
  end
end

-- gives units back to every lane, up to full; a sliding window's from its oldest sub-window on
local function refundUnits(st, units)
  local ls, tok = st.ls, st.tok
  for i = 1, ls.n do
    local a = ls.algs[i]
    if a == 't' then tok[i] = min(ls.caps[i], tok[i] + units)
    elseif a == 'g' then tok[i] = max(0, tok[i] - units * ls.periods[i] / ls.refills[i])
    else
      local win, back = st.win[i], units
      for s = win.newest - SLOTS, win.newest do
        if back <= 0 then break end
        local at = (s % (SLOTS + 1)) + 1
        local b = min(back, win.c[at])
        win.c[at] = win.c[at] - b
        back = back - b
      end
    end
  end
end

local states = {}
for k = 1, nkeys do
  local spec = ARGV[2 * k]
  local st
  if sub(spec, 1, 1) == '#' then st = counterOf(KEYS[k], spec, ARGV[2 * k + 1])
  else st = load(KEYS[k], spec, ARGV[2 * k + 1]) end
  -- a value replaced (none of ours) is written by any operation that may write
  st.broken = st.repaired == 1
  states[k] = st
end

local OPS = { t = true, l = true, r = true, f = true, a = true, m = true, w = true }
local reply = { now }
local r = 1
local a = 2 + 2 * nkeys
local nargs = #ARGV
local waits, places = {}, {}
while a <= nargs do
  local op, units, m = ARGV[a], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  if not OPS[op] then
    return redis.error_reply('ERR quotagate buckets: unknown operation ' .. tostring(op))
  end
  local maxWait = 0
  if op == 'w' then
    local u, mw = string.match(ARGV[a + 1], '^(%d+)/(%d+)$')
    if not u then return redis.error_reply('ERR quotagate buckets: bad reserve ' .. tostring(ARGV[a + 1])) end
    units, maxWait = tonumber(u), tonumber(mw)
  end
  local first = a + 3
  a = first + m
  local done = 1
  for j = 1, m do
    local k = tonumber(ARGV[first + j - 1])
    places[j] = k
    local w = wait(states[k], units)
    waits[j] = w
    if op == 'w' then
      -- a calendar quota is never delayed into its next period: it refuses as a take does
      -- nor is a sliding window (it has no debt to wait for): a wait refuses
      local stk = states[k]
      if w < 0 or w > maxWait or (w > 0 and (stk.counter or stk.ls.window)) then done = 0 end
    elseif w ~= 0 then
      done = 0
    end
  end
  local takes = op == 'f' or (op == 't' or op == 'w') and done == 1
  local writes = op ~= 'l' and op ~= 'a'
  r = r + 1
  reply[r] = ((op == 't' or op == 'w') and done) or 1
  for j = 1, m do
    local k = places[j]
    local st = states[k]
    if writes and (st.broken or st.restored) then st.dirty, st.pxat = true, true end
    if st.counter then
      if takes then
        st.used, st.fresh, st.dirty, st.pxat = st.used + units, false, true, true
      elseif op == 'r' and not st.fresh then
        st.used, st.dirty = max(0, st.used - units), true
      end
      reply[r + 1] = st.repaired
      reply[r + 2] = waits[j]
      reply[r + 3] = 1
      reply[r + 4] = st.limit - st.used
      r = r + 4
    else
      local tok, ls = st.tok, st.ls
      local n = ls.n
      if takes then
        if ls.simple then
          for i = 1, n do tok[i] = tok[i] - units end
        else
          takeUnits(st, units)
        end
        st.fresh, st.dirty = false, true
      elseif op == 'r' then
        if not st.fresh then
          if ls.simple then
            local caps = ls.caps
            for i = 1, n do tok[i] = min(caps[i], tok[i] + units) end
          else
            refundUnits(st, units)
          end
          st.dirty = true
        end
      elseif op == 'm' then
        if not st.fresh and st.spec ~= ARGV[2 * k] then
          move(st, ARGV[2 * k])
          st.dirty = true
          tok, ls, n = st.tok, st.ls, st.ls.n
        end
      end
      reply[r + 1] = st.repaired
      reply[r + 2] = waits[j]
      reply[r + 3] = n
      if ls.simple then
        for i = 1, n do reply[r + 3 + i] = floor(tok[i]) end
      else
        for i = 1, n do reply[r + 3 + i] = floor(left(st, i)) end
      end
      r = r + 3 + n
    end
    st.repaired = 0
  end
end

for k = 1, nkeys do
  local st = states[k]
  if st.dirty then
    if st.counter then
      if st.pxat then
        call('SET', KEYS[k], string.format('%d', st.used), 'PXAT', st.expires)
      else
        call('SET', KEYS[k], string.format('%d', st.used), 'KEEPTTL')
      end
    else
      save(KEYS[k], st)
    end
  end
end
return reply
