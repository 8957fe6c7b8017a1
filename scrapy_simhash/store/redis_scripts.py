"""The Redis store's server side: its key layout (shards, bucket bits) and the Lua scripts that run
each of its operations atomically on the server (:mod:`scrapy_simhash.store.redisstore` registers
them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy_simhash.store.base import TableLayout


#: Shards of the key and record hashes (part of the format: every process must agree).
SHARDS = 1024


#: Bits of a table key that name its bucket (part of the format).
BUCKET_BITS = 16

#: The bytes of a hot state in an entry (:data:`scrapy_simhash.store.hot.HOT`).
HOT_WIDTH = 57


# Operations that need no layout: open, create and replace the metadata, destroy. KEYS[1] = P meta.
ADMIN_LUA = r"""
local P = string.sub(KEYS[1], 1, -5)
local op = ARGV[1]

local function tables_of(meta)  -- comb(blocks, k): the tables of the layout in the metadata
  local blocks, k = tonumber(meta['blocks']) or 0, tonumber(meta['max_distance']) or 0
  local tables = 1
  for i = 1, k do tables = tables * (blocks - k + i) / i end
  return math.min(tables, 100)
end

-- What an index's keys lack of what its own counts say (evicted or deleted keys): {what, ...}.
-- Whole keys vanish (a shard, a table, a counter), so the sums of the shards' lengths and the
-- existence of the single keys tell it.
local function audit(meta, shards)
  local ok, m = pcall(cjson.decode, meta)
  if not ok or type(m) ~= 'table' or m['format'] ~= 'scrapy-simhash-index' then return {} end
  local lost = {}
  local function sum(kind)
    local n = 0
    for s = 0, shards - 1 do n = n + redis.call('HLEN', P .. kind .. s) end
    return n
  end
  local function counted(name, what, holds, where)  -- the counter P name against what the shards hold
    local c = redis.call('GET', P .. name)
    if not c then
      if holds > 0 then lost[#lost + 1] = 'its count of ' .. what .. ' (' .. P .. name .. ')' end
    elseif tonumber(c) > holds then
      lost[#lost + 1] = (tonumber(c) - holds) .. ' of its ' .. c .. ' ' .. what .. ' (' .. where .. ')'
    elseif tonumber(c) < holds then
      lost[#lost + 1] = 'its count of ' .. what .. ' (' .. P .. name .. ': ' .. c .. ', its shards hold ' .. holds .. ')'
    end
  end
  -- The entries (a key's fingerprint, record and hot state in one: P r<shard>) against P ne; where
  -- they or a count disagree, the fingerprints, records and hot states are counted in the entries.
  local entries = sum('r')
  local ne, n, nr, nh = redis.call('GET', P .. 'ne'), redis.call('GET', P .. 'n'), redis.call('GET', P .. 'nr'),
    redis.call('GET', P .. 'nh')
  local keys, records, hots = tonumber(n) or 0, tonumber(nr) or 0, tonumber(nh) or 0
  if tonumber(ne) ~= entries or (entries > 0 and not (n and nr and nh)) then
    keys, records, hots = 0, 0, 0
    for s = 0, shards - 1 do
      for _, v in ipairs(redis.call('HVALS', P .. 'r' .. s)) do
        local f = string.byte(v, 1)
        if f % 2 == 1 then keys = keys + 1 end
        if math.floor(f / 2) % 2 == 1 then records = records + 1 end
        if f >= 4 then hots = hots + 1 end
      end
    end
  end
  if not redis.call('GET', P .. 'id') then lost[#lost + 1] = 'its token (' .. P .. 'id)' end
  if entries > 0 and not redis.call('GET', P .. 'w') then lost[#lost + 1] = 'its write count (' .. P .. 'w)' end
  counted('ne', "URLs' entries", entries, P .. 'r0..' .. (shards - 1))
  counted('nh', 'hot states', hots, P .. 'r0..' .. (shards - 1))
  counted('n', "URLs' fingerprints", keys, P .. 'r0..' .. (shards - 1))
  counted('nr', 'records', records, P .. 'r0..' .. (shards - 1))
  if keys > 0 then
    if redis.call('HLEN', P .. 'fps') == 0 then lost[#lost + 1] = 'its fingerprints (' .. P .. 'fps)' end
    for t = 0, tables_of(m) - 1 do
      local name = P .. string.format('t%02d', t)
      if redis.call('EXISTS', name) == 0 then lost[#lost + 1] = 'its table ' .. name end
    end
  end
  return lost
end

if op == 'open' then
  local t = redis.call('TYPE', P .. 'meta')['ok']
  local meta = false
  if t == 'string' then meta = redis.call('GET', P .. 'meta') end
  local others = redis.call('EXISTS', P .. 'fps', P .. 'n', P .. 'aux', P .. 'id', P .. 'w')
  if not meta and others == 0 and ARGV[2] == 'audit' then  -- no metadata: records or keys left?
    local names = {P .. 'nr', P .. 'ne', P .. 'nh'}
    for s = 0, tonumber(ARGV[3]) - 1 do names[#names + 1] = P .. 'r' .. s end
    others = redis.call('EXISTS', unpack(names))
  end
  local lost = {}
  if meta and ARGV[2] == 'audit' then lost = audit(meta, tonumber(ARGV[3])) end
  return {t, meta, others, lost}
elseif op == 'cmeta' then
  redis.call('SET', P .. 'meta', ARGV[2], 'NX')
  redis.call('SET', P .. 'id', ARGV[3], 'NX')
  for _, name in ipairs({'n', 'nr', 'ne', 'nh'}) do redis.call('SET', P .. name, '0', 'NX') end
  return {redis.call('GET', P .. 'meta'), redis.call('GET', P .. 'id'), redis.call('GET', P .. 'w') or '0'}
elseif op == 'wmeta' then
  if redis.call('GET', P .. 'id') ~= ARGV[3] then return redis.error_reply('SIMHASH_LOST') end
  redis.call('SET', P .. 'meta', ARGV[2])
  return 1
elseif op == 'destroy' then  -- only the keys an index owns: its names, each of the type it writes there
  if redis.call('TYPE', P .. 'meta')['ok'] ~= 'string' then return 0 end
  local ok, meta = pcall(cjson.decode, redis.call('GET', P .. 'meta'))
  if not ok or type(meta) ~= 'table' or meta['format'] ~= 'scrapy-simhash-index' then return 0 end
  local names = {meta = 'string', id = 'string', n = 'string', nr = 'string', ne = 'string', nh = 'string',
                 w = 'string', fps = 'hash', due = 'zset', aux = 'hash'}  -- due: layout 1
  for t = 0, tables_of(meta) - 1 do names[string.format('t%02d', t)] = 'hash' end
  for s = 0, tonumber(ARGV[2]) - 1 do
    names['k' .. s] = 'hash'  -- k and h: an index of the layout before entries (LAYOUT 1)
    names['r' .. s] = 'hash'
    names['h' .. s] = 'hash'
  end
  local n = 0
  for name, want in pairs(names) do
    if redis.call('TYPE', P .. name)['ok'] == want then n = n + redis.call('DEL', P .. name) end
  end
  return n
end
return redis.error_reply('SIMHASH_BADOP ' .. tostring(op))
"""


# Everything else. KEYS[1] = P meta; ARGV[1] = the op, ARGV[2] = ``<seen>:<evicted>:<the index's
# token>`` (seen: the highest write count this client was answered; evicted: '' or the server's
# ``evicted_keys`` when the client opened the index: then the call first checks that the server
# evicted nothing since and still has ``maxmemory-policy noeviction``), ARGV[3] = ``<expiry ms>:<lock
# token>:<n>:<m>`` followed by n keys to lock before the op runs and m keys whose locks the token
# must hold, released after the op (the op writes their records), or '' (all taken out of ARGV
# here), then the op's arguments. Replies ``{write count, the op's reply}``, or ``{write count, 0,
# 1}`` without running the op when another token holds one of the n keys. Filled in per layout: VW
# (value width), T (tables), SEGS (per table, the {shift, width} of each run of blocks), BB (bucket bits).
_MAIN_LUA = r"""
local P = string.sub(KEYS[1], 1, -5)
local op = ARGV[1]
local byte, sub, find = string.byte, string.sub, string.find
local lockspec, locks, frees = table.remove(ARGV, 3), {}, {}
local colon = find(ARGV[2], ':', 1, true)
local colon2 = find(ARGV[2], ':', colon + 1, true)
local evicted = sub(ARGV[2], colon + 1, colon2 - 1)
if evicted ~= '' then  -- before anything else: a key this call needs may be one of those evicted
  local n = tonumber(string.match(redis.call('INFO', 'stats'), 'evicted_keys:(%%d+)') or '0')
  local policy = string.match(redis.call('INFO', 'memory'), 'maxmemory_policy:([%%w%%-]+)') or 'noeviction'
  if n ~= tonumber(evicted) or policy ~= 'noeviction' then
    return redis.error_reply('SIMHASH_EVICTED ' .. n .. ' ' .. policy)
  end
end
if redis.call('GET', P .. 'id') ~= sub(ARGV[2], colon2 + 1) then return redis.error_reply('SIMHASH_LOST') end
local W = P .. 'w'
local writes = tonumber(redis.call('GET', W) or '0')
if writes < tonumber(sub(ARGV[2], 1, colon - 1)) then
  return redis.error_reply('SIMHASH_ROLLBACK ' .. writes .. ' < ' .. sub(ARGV[2], 1, colon - 1))
end
if lockspec ~= '' then  -- all of the n keys' locks, or none and no op; the m keys' still the token's
  local a = find(lockspec, ':', 1, true)
  local b = find(lockspec, ':', a + 1, true)
  local c = find(lockspec, ':', b + 1, true)
  local ttl, tok = sub(lockspec, 1, a - 1), sub(lockspec, a + 1, b - 1)
  for i = 1, tonumber(sub(lockspec, b + 1, c - 1)) do locks[i] = P .. 'L' .. table.remove(ARGV, 3) end
  for i = 1, tonumber(sub(lockspec, c + 1)) do frees[i] = P .. 'L' .. table.remove(ARGV, 3) end
  for i, lk in ipairs(locks) do
    local cur = redis.call('GET', lk)  -- the token's own already (a retried call): kept
    if cur ~= tok then
      if cur then
        for j = 1, i - 1 do redis.call('DEL', locks[j]) end
        return {writes, 0, 1}
      end
      redis.call('SET', lk, tok, 'PX', ttl)
    end
  end
  for _, lk in ipairs(frees) do
    if redis.call('GET', lk) ~= tok then return redis.error_reply('SIMHASH_EXPIRED ' .. sub(lk, #P + 2)) end
  end
end
local VW, T, BB, NB = %(vw)d, %(tables)d, %(bucket_bits)d, %(bits)d
local SEGS = %(segs)s
local KB = %(key_bits)s
local FPS, NKEY, AUX = P .. 'fps', P .. 'n', P .. 'aux'
local TN = {}
for t = 1, T do TN[t] = P .. string.format('t%%02d', t - 1) end
local band, bxor, rshift = bit.band, bit.bxor, bit.rshift
local POW2 = {[0] = 1, 2, 4, 8, 16, 32, 64, 128}
local SEP = '\255'
local HW = %(hot_width)d
local function unpack_entry(v)  -- an entry's flags, fp, hot state, record (false: none)
  local f, p = byte(v, 1), 2
  local fp, hot, rec = false, false, false
  if band(f, 1) ~= 0 then fp = sub(v, p, p + VW - 1); p = p + VW end
  if band(f, 4) ~= 0 then hot = sub(v, p, p + HW - 1); p = p + HW end
  if band(f, 2) ~= 0 then rec = sub(v, p) end
  return f, fp, hot, rec
end
local EV = {}  -- rput's evidence: {key, value or ''} (filled before the op runs)

-- Before the first write: every key a write may touch holds its type or nothing (a script that
-- fails half-way is not rolled back), so that a foreign key fails the call before it writes.
local function need(name, want)
  local t = redis.call('TYPE', name)['ok']
  if t ~= want and t ~= 'none' then
    error({err = 'SIMHASH_FOREIGN the key ' .. name .. ' holds a ' .. t .. ', not a ' .. want})
  end
end
local function need_entries(shard)  -- the entries' shard hash and its count
  need(P .. 'r' .. shard, 'hash'); need(P .. 'ne', 'string')
end
local function need_shards(step)  -- the entries' shards of the (key, shard, ...) from ARGV[3]
  for i = 3, #ARGV, step do need_entries(ARGV[i + 1]) end
end
-- What each writing op may write besides W (whose count the call checked first): fingerprints
-- (the tables, fps, the count of keys, the entries' shards), records (the entries' shards), aux.
local function need_fps(step)
  need(FPS, 'hash'); need(NKEY, 'string')
  for t = 1, T do need(TN[t], 'hash') end
  local n = redis.call('GET', NKEY)
  if n and not tonumber(n) then error({err = 'SIMHASH_FOREIGN the key ' .. NKEY .. ' holds no count'}) end
  need_shards(step)
end
local function need_records(step)
  need(P .. 'nr', 'string'); need(P .. 'nh', 'string'); need_shards(step)
end
local function writing()  -- checks what a writing op may write (false: the op only reads)
  if op == 'cadd' then need_fps(#ARGV)
  elseif op == 'put' then need_fps(3 + T)
  elseif op == 'remove' then need_fps(2)
  elseif op == 'undo_fp' then need_fps(4)
  elseif op == 'rput' then
    need_records(5)
    for _, e in ipairs(EV) do need(e[1], 'string') end
  elseif op == 'rdel' then need_records(2)
  elseif op == 'undo_rec' then need_records(6)
  elseif op == 'aput' then need(AUX, 'hash')
  elseif op == 'apply' then return true  -- checks what it writes itself, once it knows it writes
  else return false end
  return true
end

local BITS8
local function buckets(fp)  -- the bucket of fp in every table (as the client computes them)
  if not BITS8 then BITS8 = %(bits8)s end  -- byte -> its 8 bits ('0'/'1'), a constant: no loop per call
  local parts = {}
  for i = 1, VW do parts[i] = BITS8[byte(fp, i)] end
  local b = table.concat(parts)
  local out = {}
  for t = 1, T do
    local key = {}
    for _, seg in ipairs(SEGS[t]) do key[#key + 1] = sub(b, NB - seg[1] - seg[2] + 1, NB - seg[1]) end
    local v = tonumber(sub(table.concat(key), 1, BB), 2)
    out[t] = string.char(math.floor(v / 256), v %% 256)
  end
  return out
end

local function pc32(x)
  x = x - band(rshift(x, 1), 0x55555555)
  x = band(x, 0x33333333) + band(rshift(x, 2), 0x33333333)
  x = band(x + rshift(x, 4), 0x0F0F0F0F)
  x = x + rshift(x, 8)
  x = x + rshift(x, 16)
  return band(x, 0x3F)
end

local function words(s, p)
  local w = {}
  for i = 0, VW / 4 - 1 do
    local a, b, c, d = byte(s, p + 4 * i, p + 4 * i + 3)
    w[i + 1] = ((a * 256 + b) * 256 + c) * 256 + d
  end
  return w
end

-- The first n candidates packed in raw at a distance lo < d <= hi of fp, each once: found[f] = d, in order
local function scan(raw, n, fp, lo, hi, found, order)
  local q = words(fp, 1)
  local nw = VW / 4
  for c = 0, n - 1 do
    local p = c * VW + 1
    local d = 0
    for w = 0, nw - 1 do
      local a, b, cc, e = byte(raw, p + 4 * w, p + 4 * w + 3)
      d = d + pc32(bxor(((a * 256 + b) * 256 + cc) * 256 + e, q[w + 1]))
      if d > hi then break end
    end
    if d > lo and d <= hi then
      local f = sub(raw, p, p + VW - 1)
      if not found[f] then found[f] = d; order[#order + 1] = f end
    end
  end
end

local function with_keys(found, order, out)  -- appends fp, dist, keys of each found fp to out
  for _, f in ipairs(order) do
    out[#out + 1] = f
    out[#out + 1] = found[f]
    out[#out + 1] = redis.call('HGET', FPS, f) or ''
  end
  return out
end

-- The fingerprints of raw (buckets' blobs joined) within k of fp, the first limit of them read
-- (0: all; fp itself looked up apart when capped): {total, capped, fp, dist, keys, ...}
local function verified(raw, fp, k, limit)
  local total = #raw / VW
  local n = total
  local found, order = {}, {}
  if limit > 0 and limit < total then
    n = limit
    if redis.call('HEXISTS', FPS, fp) == 1 then found[fp] = 0; order[1] = fp end
  end
  scan(raw, n, fp, -1, k, found, order)
  return with_keys(found, order, {total, (limit > 0 and limit < total) and 1 or 0})
end

-- Candidates of fp in its buckets (ARGV from i: T buckets), verified: {total, capped, fp, dist, keys, ...}
local function probe(fp, k, limit, i)
  local parts = {}
  for t = 1, T do
    local blob = redis.call('HGET', TN[t], ARGV[i + t - 1])
    if blob then parts[#parts + 1] = blob end
  end
  return verified(table.concat(parts), fp, k, limit)
end

-- The wide tier's candidates: fp's buckets (ARGV from i: T of them) and the (table, bucket) pairs
-- after wide (ARGV[i + T]) up to the end of ARGV, at most limit verified; those at k < d <= wide:
-- {fp, dist, keys, ...}
local function wide_probe(fp, k, wide, limit, i)
  local parts = {}
  for t = 1, T do
    local blob = redis.call('HGET', TN[t], ARGV[i + t - 1])
    if blob then parts[#parts + 1] = blob end
  end
  for j = i + T + 1, #ARGV, 2 do
    local blob = redis.call('HGET', TN[tonumber(ARGV[j])], ARGV[j + 1])
    if blob then parts[#parts + 1] = blob end
  end
  local raw = table.concat(parts)
  local n = #raw / VW
  if limit > 0 and limit < n then n = limit end
  local found, order = {}, {}
  scan(raw, n, fp, k, wide, found, order)
  return with_keys(found, order, {})
end

local function bucket_add(t, bid, fp)
  local cur = redis.call('HGET', TN[t], bid)
  redis.call('HSET', TN[t], bid, (cur or '') .. fp)
end

local function bucket_remove(t, bid, fp)
  local cur = redis.call('HGET', TN[t], bid)
  if not cur then return end
  local i = 1
  while true do
    local s = find(cur, fp, i, true)
    if not s then return end
    if (s - 1) %% VW == 0 then
      local rest = sub(cur, 1, s - 1) .. sub(cur, s + VW)
      if rest == '' then redis.call('HDEL', TN[t], bid) else redis.call('HSET', TN[t], bid, rest) end
      return
    end
    i = s + 1
  end
end

-- A key's entry in its shard (P r<shard>: key -> entry): a flags byte (1: a fingerprint, 2: a
-- record, 4: a hot state), then the fingerprint (VW bytes), the hot state (HW bytes), the record.
local function entry(key, shard)  -- flags, fp, hot, record (false: none)
  local v = redis.call('HGET', P .. 'r' .. shard, key)
  if not v then return 0, false, false, false end
  return unpack_entry(v)
end

local function put_entry(key, shard, fp, hot, rec)  -- the key's entry (none: deleted, P ne counts them)
  local rh = P .. 'r' .. shard
  if not fp and not rec then
    if redis.call('HDEL', rh, key) == 1 then redis.call('DECR', P .. 'ne') end
    return
  end
  hot = rec and hot or false
  local f = (fp and 1 or 0) + (rec and 2 or 0) + (hot and 4 or 0)
  if redis.call('HSET', rh, key, string.char(f) .. (fp or '') .. (hot or '') .. (rec or '')) == 1 then
    redis.call('INCR', P .. 'ne')
  end
end

local function unfile(key, fp)  -- key no longer has fp
  local ks = redis.call('HGET', FPS, fp)
  if not ks or ks == key then
    redis.call('HDEL', FPS, fp)
    local bids = buckets(fp)
    for t = 1, T do bucket_remove(t, bids[t], fp) end
    return
  end
  local keep, i = {}, 1
  while true do
    local s = find(ks, SEP, i, true)
    local one = sub(ks, i, (s or 0) - 1)
    if one ~= key then keep[#keep + 1] = one end
    if not s then break end
    i = s + 1
  end
  redis.call('HSET', FPS, fp, table.concat(keep, SEP))
end

-- key (in shard) gets fp (bucket ids in ARGV from i, or computed when i is nil); returns its old fp
local function add(key, shard, fp, i)
  local _, old, hot, rec = entry(key, shard)
  if old == fp then return old end
  if old then unfile(key, old) else redis.call('INCR', NKEY) end
  put_entry(key, shard, fp, hot, rec)
  local ks = redis.call('HGET', FPS, fp)
  if ks then
    redis.call('HSET', FPS, fp, ks .. SEP .. key)
  else
    redis.call('HSET', FPS, fp, key)
    local bids = i and {unpack(ARGV, i, i + T - 1)} or buckets(fp)
    for t = 1, T do bucket_add(t, bids[t], fp) end
  end
  return old
end

local function remove(key, shard)  -- returns the key's old fp (or false)
  local _, old, hot, rec = entry(key, shard)
  if not old then return false end
  put_entry(key, shard, false, hot, rec)
  redis.call('DECR', NKEY)
  unfile(key, old)
  return old
end

local function set_record(key, shard, value, due, hot)  -- value, due, hot: false to delete
  local _, fp, had_hot, had = entry(key, shard)
  -- P nr, P nh: the numbers of records and of hot states (what open() checks against)
  if value and not had then redis.call('INCR', P .. 'nr') elseif had and not value then redis.call('DECR', P .. 'nr') end
  hot = value and due and hot or false
  if hot and not had_hot then redis.call('INCR', P .. 'nh') elseif had_hot and not hot then redis.call('DECR', P .. 'nh') end
  put_entry(key, shard, fp, hot, value)
end

local function get_record(key, shard)  -- {value or false, its hot state (its due time first) or false}
  local _, _, hot, v = entry(key, shard)
  if not v then return {false, false} end
  return {v, hot}
end

local function arg(v) if v == '' then return false end return v end

-- Per table, the buckets one bit away from the buckets in ARGV from b (a wide lookup's): in table
-- t, the bucket with one of its low min(BB, key bits) bits flipped.
local function around(b)
  local out, char = {}, string.char
  for t = 1, T do
    local bid = ARGV[b + t - 1]
    local hi, lo = byte(bid, 1), byte(bid, 2)
    local o = {}
    for j = 0, math.min(BB, KB[t]) - 1 do  -- bit j of the 16: of the low byte, then of the high one
      if j < 8 then o[j + 1] = char(hi, bxor(lo, POW2[j])) else o[j + 1] = char(bxor(hi, POW2[j - 8]), lo) end
    end
    out[t] = o
  end
  return out
end

local CRC
local function shard_of(key)  -- crc32(key) %% SHARDS, as the client computes it (zlib's CRC-32)
  if not CRC then CRC = %(crc)s end  -- zlib's table (as signed 32-bit words), a constant: no loop per call
  local c = -1
  for j = 1, #key do c = bxor(rshift(c, 8), CRC[band(bxor(c, byte(key, j)), 0xFF)]) end
  return band(bit.bnot(c), 0x7FFFFFFF) %% %(shards)d
end

-- One decision's snapshot (ARGV from i: key, shard, fp or '', k, limit, wide, the evidence prefix
-- or '', T buckets; with wide > k and no other key's fingerprint within k, the wide lookup reads
-- the buckets one bit away from each of them too, the pairs of ``around``): the key's record and
-- fingerprint, the lookup of fp within k ({total, capped, fp, dist, keys, ...}), the candidates of
-- the wide tier's (the buckets read, packed: the client verifies them), the records of every key
-- found within k ({key, record}*), the version (a digest of all of it and of the buckets read) and, with ``evidence`` and
-- a prefix (a server: the evidence keys are outside P), the evidence of the key (when it has a
-- record) and of every other key found within k ({key, evidence}*; not in the version). With
-- ``check``, only the version: the fingerprints found are those the client sends (ARGV[check]: how
-- many, then each, as the snapshot found them), the buckets read unchanged if the version is.
local function state(i, evidence, check)
  local key, shard, fp = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local k, limit, wide = tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4]), tonumber(ARGV[i + 5])
  local evp = evidence and ARGV[i + 6] or ''
  local b = i + 7
  local near = fp ~= '' and wide > k and around(b) or {}
  local function read_mine()  -- fp's buckets (T), table by table ('': none): one HMGET a table
    local mine = {}
    for t = 1, T do mine[t] = redis.call('HMGET', TN[t], ARGV[b + t - 1])[1] or '' end
    return mine
  end
  -- The wide lookup's buckets, table by table ('': none), and true; or none and false where a
  -- key other than the decided one has a fingerprint found within k (keys: the found
  -- fingerprints' keys): the wide tier is only for a page without such a match, and these
  -- buckets are most of what a snapshot reads.
  local function read_around(keys)
    local others = {}
    for _, ks in ipairs(keys) do
      if ks ~= '' and ks ~= key then return others, false end
    end
    for t = 1, T do
      if near[t] and #near[t] > 0 then
        local got = redis.call('HMGET', TN[t], unpack(near[t]))
        for j = 1, #got do others[#others + 1] = got[j] or '' end
      end
    end
    return others, true
  end
  local _, own, _, rec = entry(key, shard)
  local d, nd = {}, 0
  local function piece(s)  -- its length, then itself: no copy of a bucket's blob until the one concat
    d[nd + 1] = #s .. ':'; d[nd + 2] = s; nd = nd + 2
  end
  piece(rec and ('+' .. rec) or '-')
  piece(own or '')
  local res, wres, recs, evs = {0, 0}, '', {}, {}
  local function ev(one)
    local e = redis.call('GET', evp .. one)
    if e then evs[#evs + 1] = one; evs[#evs + 1] = e end
  end
  if evp ~= '' and rec then ev(key) end
  local function buckets_read(mine, others)  -- the buckets read, in the digest: their lengths, then fp's, then the others
    local lens = {}
    for j, blob in ipairs(mine) do lens[j] = #blob end
    for j, blob in ipairs(others) do lens[T + j] = #blob end
    local raw, more = table.concat(mine), table.concat(others)
    piece(table.concat(lens, ',')); piece(raw); piece(more)
    return raw, more
  end
  if fp ~= '' and check then
    local mine, keys = read_mine(), {}
    for j = check + 1, check + tonumber(ARGV[check]) do keys[#keys + 1] = redis.call('HGET', FPS, ARGV[j]) or '' end
    buckets_read(mine, (read_around(keys)))
    for _, ks in ipairs(keys) do piece(ks) end
  elseif fp ~= '' then
    local mine = read_mine()
    res = verified(table.concat(mine), fp, k, limit)
    local keys = {}
    for j = 5, #res, 3 do keys[#keys + 1] = res[j] end
    local others, read = read_around(keys)
    local raw, more = buckets_read(mine, others)
    if wide > k and read then wres = raw .. more end  -- verified by the client (the wide tier's keys: 'wkeys')
    local seen = {}
    for _, list in ipairs({{res, 5}}) do
      for j = list[2], #list[1], 3 do
        local ks = list[1][j]
        piece(ks)
        local p = 1
        while ks ~= '' do
          local s = find(ks, SEP, p, true)
          local one = sub(ks, p, (s or 0) - 1)
          if not seen[one] then
            seen[one] = true
            local _, _, _, r = entry(one, shard_of(one))
            if r then recs[#recs + 1] = one; recs[#recs + 1] = r end
            if r and evp ~= '' and list[2] == 5 and one ~= key then ev(one) end
          end
          if not s then break end
          p = s + 1
        end
      end
    end
  end
  return rec, own, res, wres, recs, redis.sha1hex(table.concat(d)), evs
end

local function run()
  if op == 'cadd' then  -- key, shard, fp, k, limit, buckets, wide, (table, bucket)* of the wide lookup
    local key, shard, fp = ARGV[3], ARGV[4], ARGV[5]
    local k, limit, wide = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8 + T])
    local res = probe(fp, k, limit, 8)
    local dup = false
    for j = 5, #res, 3 do
      if res[j] ~= '' and res[j] ~= key then dup = true end
    end
    local old
    local wres = {}
    if dup then
      old = remove(key, shard)
    else
      if wide > k then wres = wide_probe(fp, k, wide, limit, 8) end
      old = add(key, shard, fp, 8)
    end
    return {old or '', res, wres}
  elseif op == 'wkeys' then  -- fps: {fp, keys}* and the records of those keys {key, record}*
    local out, recs = {}, {}
    for i = 3, #ARGV do
      local ks = redis.call('HGET', FPS, ARGV[i]) or ''
      out[#out + 1] = ARGV[i]
      out[#out + 1] = ks
      local p = 1
      while ks ~= '' do
        local s = find(ks, SEP, p, true)
        local one = sub(ks, p, (s or 0) - 1)
        local _, _, _, r = entry(one, shard_of(one))
        if r then recs[#recs + 1] = one; recs[#recs + 1] = r end
        if not s then break end
        p = s + 1
      end
    end
    return {out, recs}
  elseif op == 'snap' then  -- a decision's snapshot spec (see state)
    local rec, own, res, wres, recs, version, evs = state(3, true)
    return {rec and {rec} or {}, own and {own} or {}, res, wres, recs, writes .. ' ' .. version, evs}
  elseif op == 'apply' then
    -- The spec, then the snapshot's version, c and the c fingerprints it found, the key's fingerprint ('a' fp buckets, 'r' remove, 'n'
    -- as it is), its record ('1' value due hot, 'd' delete, 'n' as it is), m (evidence key, value
    -- or ''), a (aux name, flag, value): all of it, or nothing when what the snapshot read changed
    -- ({0}) or another process holds the key's record (batch(key): {2}); {1}: written.
    -- The version is ``<write count> <digest>``: with the write count unchanged since the
    -- snapshot, nothing it read can have changed (every write counts), so only another count
    -- makes the call read it all again and compare digests.
    local key, shard = ARGV[3], ARGV[4]
    local spec_end = 3 + 7 + T
    local seen, digest = string.match(ARGV[spec_end], '^(%%d+) (%%x+)$')
    if tonumber(seen) ~= writes then
      local _, _, _, _, _, version = state(3, false, spec_end + 1)
      if version ~= digest then return {0} end
    end
    local i = spec_end + 1 + tonumber(ARGV[spec_end + 1])
    if redis.call('EXISTS', P .. 'L' .. key) == 1 then return {2} end
    local fop = ARGV[i + 1]
    local fi = i + 2
    local ri = fop == 'a' and fi + 1 + T or fi
    local rop = ARGV[ri]
    local ei = rop == '1' and ri + 4 or ri + 1
    local ev = {}
    for j = 1, tonumber(ARGV[ei]) do ev[j] = {ARGV[ei + 2 * j - 1], ARGV[ei + 2 * j]} end
    local ai = ei + 1 + 2 * #ev
    local na = tonumber(ARGV[ai])
    -- Before the first write: every key it may write holds its type or nothing.
    if fop ~= 'n' then
      need(FPS, 'hash'); need(NKEY, 'string'); need_entries(shard)
      for t = 1, T do need(TN[t], 'hash') end
      local cnt = redis.call('GET', NKEY)
      if cnt and not tonumber(cnt) then error({err = 'SIMHASH_FOREIGN the key ' .. NKEY .. ' holds no count'}) end
    end
    if rop ~= 'n' then need(P .. 'nr', 'string'); need(P .. 'nh', 'string'); need_entries(shard) end
    for _, e in ipairs(ev) do need(e[1], 'string') end
    if na > 0 then need(AUX, 'hash') end
    if fop == 'a' then add(key, shard, ARGV[fi], fi + 1) elseif fop == 'r' then remove(key, shard) end
    if rop == '1' then
      set_record(key, shard, ARGV[ri + 1], arg(ARGV[ri + 2]), arg(ARGV[ri + 3]))
    elseif rop == 'd' then
      set_record(key, shard, false, false, false)
    end
    for _, e in ipairs(ev) do  -- keys of their own, outside P: a server, not a cluster (one slot)
      if e[2] == '' then redis.call('DEL', e[1]) else redis.call('SET', e[1], e[2]) end
    end
    for j = ai + 1, ai + 3 * na, 3 do
      if ARGV[j + 1] == '1' then redis.call('HSET', AUX, ARGV[j], ARGV[j + 2]) else redis.call('HDEL', AUX, ARGV[j]) end
    end
    return {1}
  elseif op == 'near' then  -- fp, k, limit, buckets
    return probe(ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), 6)
  elseif op == 'put' then  -- (key, shard, fp, buckets)*: old fps
    local out = {}
    for i = 3, #ARGV, 3 + T do out[#out + 1] = add(ARGV[i], ARGV[i + 1], ARGV[i + 2], i + 3) or '' end
    return out
  elseif op == 'remove' then  -- (key, shard)*: old fps
    local out = {}
    for i = 3, #ARGV, 2 do out[#out + 1] = remove(ARGV[i], ARGV[i + 1]) or '' end
    return out
  elseif op == 'undo_fp' then  -- (key, shard, now, before)*: put `before` back where `now` still is
    for i = 3, #ARGV, 4 do
      local key, shard = ARGV[i], ARGV[i + 1]
      local _, now = entry(key, shard)
      if (now or '') == ARGV[i + 2] then
        local before = arg(ARGV[i + 3])
        if before then add(key, shard, before, nil) else remove(key, shard) end
      end
    end
    return 1
  elseif op == 'get' then  -- (key, shard)*
    local out = {}
    for i = 3, #ARGV, 2 do
      local _, fp = entry(ARGV[i], ARGV[i + 1])
      out[#out + 1] = {fp or nil}
    end
    return out
  elseif op == 'count' then
    return tonumber(redis.call('GET', NKEY) or '0')
  elseif op == 'scan' then  -- kind ('k': fingerprints, 'r': records), first shard, limit: whole shards, limit entries past the first
    local kind, s, limit = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
    local out, n = {}, 0
    local first = s
    while s < %(shards)d and (s == first or n < limit) do
      local all = redis.call('HGETALL', P .. 'r' .. s)
      local got = {}
      for j = 1, #all, 2 do
        local _, fp, _, rec = unpack_entry(all[j + 1])
        local v = kind == 'k' and fp or kind == 'r' and rec
        if v then got[#got + 1] = all[j]; got[#got + 1] = v end
      end
      if #got > 0 then
        out[#out + 1] = s
        out[#out + 1] = got
        if s ~= first then n = n + #got / 2 end
      end
      s = s + 1
    end
    return out
  elseif op == 'rget' then  -- (key, shard)*
    local out = {}
    for i = 3, #ARGV, 2 do
      local _, _, _, rec = entry(ARGV[i], ARGV[i + 1])
      out[#out + 1] = {rec or nil}
    end
    return out
  elseif op == 'rput' then  -- (key, shard, value, due, hot)*: old {value, hot} of each; then the evidence
    local out = {}
    for i = 3, #ARGV, 5 do
      out[#out + 1] = get_record(ARGV[i], ARGV[i + 1])
      set_record(ARGV[i], ARGV[i + 1], ARGV[i + 2], arg(ARGV[i + 3]), arg(ARGV[i + 4]))
    end
    for _, e in ipairs(EV) do  -- keys of their own, outside P: a server, not a cluster (one slot)
      if e[2] == '' then redis.call('DEL', e[1]) else redis.call('SET', e[1], e[2]) end
    end
    return out
  elseif op == 'rdel' then  -- (key, shard)*: old {value, hot} of each
    local out = {}
    for i = 3, #ARGV, 2 do
      out[#out + 1] = get_record(ARGV[i], ARGV[i + 1])
      set_record(ARGV[i], ARGV[i + 1], false, false, false)
    end
    return out
  elseif op == 'undo_rec' then  -- (key, shard, now, value, due, hot)*: put value back where `now` still is
    for i = 3, #ARGV, 6 do
      local key, shard = ARGV[i], ARGV[i + 1]
      local _, _, _, now = entry(key, shard)
      if (now or '') == ARGV[i + 2] then
        set_record(key, shard, arg(ARGV[i + 3]), arg(ARGV[i + 4]), arg(ARGV[i + 5]))
      end
    end
    return 1
  elseif op == 'hot' then  -- first shard, limit: as scan of 'h', each shard's keys joined by SEP and states concatenated
    local s, limit = tonumber(ARGV[3]), tonumber(ARGV[4])
    local out, n, first = {}, 0, s
    while s < %(shards)d and (s == first or n < limit) do
      local all = redis.call('HGETALL', P .. 'r' .. s)
      local keys, hots = {}, {}
      for j = 1, #all, 2 do
        local _, _, hot = unpack_entry(all[j + 1])
        if hot then
          keys[#keys + 1] = all[j]
          hots[#hots + 1] = hot
        end
      end
      if #keys > 0 then
        out[#out + 1] = s
        out[#out + 1] = table.concat(keys, SEP)
        out[#out + 1] = table.concat(hots)
        n = n + #keys
      end
      s = s + 1
    end
    return out
  elseif op == 'aget' then
    local out = {}
    for i = 3, #ARGV do out[#out + 1] = {redis.call('HGET', AUX, ARGV[i]) or nil} end
    return out
  elseif op == 'aput' then  -- (name, flag, value)*, flag '1': set, '0': delete; old values
    local out = {}
    for i = 3, #ARGV, 3 do
      local old = redis.call('HGET', AUX, ARGV[i])
      out[#out + 1] = old and {old} or {}
      if ARGV[i + 1] == '1' then redis.call('HSET', AUX, ARGV[i], ARGV[i + 2]) else redis.call('HDEL', AUX, ARGV[i]) end
    end
    return out
  elseif op == 'unlock' then  -- token, keys: how many of the keys' locks the token still held
    local n = 0
    for i = 4, #ARGV do
      local lk = P .. 'L' .. ARGV[i]
      if redis.call('GET', lk) == ARGV[3] then n = n + redis.call('DEL', lk) end
    end
    return n
  elseif op == 'stats' then
    local out = {'keys', tonumber(redis.call('GET', NKEY) or '0'), 'fps', redis.call('HLEN', FPS),
                 'dues', tonumber(redis.call('GET', P .. 'nh') or '0')}
    local used = 0
    for _, name in ipairs({P .. 'meta', P .. 'id', P .. 'n', P .. 'nr', P .. 'ne', P .. 'nh', W, FPS, AUX}) do
      used = used + (redis.call('MEMORY', 'USAGE', name, 'SAMPLES', 0) or 0)
    end
    local tables = 0
    for t = 1, T do tables = tables + (redis.call('MEMORY', 'USAGE', TN[t], 'SAMPLES', 0) or 0) end
    local keys, records = 0, 0  -- the entries: keys, fingerprints, hot states and records in one
    for s = 0, %(shards)d - 1 do
      records = records + (redis.call('MEMORY', 'USAGE', P .. 'r' .. s, 'SAMPLES', 0) or 0)
    end
    local fpsb = redis.call('MEMORY', 'USAGE', FPS, 'SAMPLES', 0) or 0
    for _, v in ipairs({'tables_bytes', tables, 'fps_bytes', fpsb, 'keys_bytes', keys, 'records_bytes', records,
                        'redis_bytes', used + tables + keys + records}) do out[#out + 1] = v end
    return out
  end
  return redis.error_reply('SIMHASH_BADOP ' .. tostring(op))
end

-- rput: ARGV[3] = m, then m (evidence key, value or '') before the records: taken out here.
if op == 'rput' then
  for i = 1, tonumber(table.remove(ARGV, 3)) do EV[i] = {table.remove(ARGV, 3), table.remove(ARGV, 3)} end
end

local writes_op = writing()
local res = run()
if type(res) == 'table' and res['err'] then return res end
if writes_op then writes = redis.call('INCR', W) end
for _, lk in ipairs(frees) do redis.call('DEL', lk) end
return {writes, res}
"""


# A cluster's record shard (layout 3): KEYS[1] = the shard's hash (key -> entry: a flags byte, 2: a
# record, 4: a hot state, then the hot state, HOT_WIDTH bytes, then the record), a key of its own
# hash tag, so that the shards spread over the cluster's slots. ARGV[1] = '' or the node's
# ``evicted_keys`` when the client opened the index (then the call first checks, as the main
# script does, that the node evicted nothing since and still has ``noeviction``), ARGV[2] = the op.
RECORDS_LUA = r"""
local R, evicted = KEYS[1], table.remove(ARGV, 1)
if evicted ~= '' then
  local n = tonumber(string.match(redis.call('INFO', 'stats'), 'evicted_keys:(%d+)') or '0')
  local policy = string.match(redis.call('INFO', 'memory'), 'maxmemory_policy:([%w%-]+)') or 'noeviction'
  if n ~= tonumber(evicted) or policy ~= 'noeviction' then
    return redis.error_reply('SIMHASH_EVICTED ' .. n .. ' ' .. policy)
  end
end
local op = ARGV[1]
local t = redis.call('TYPE', R)['ok']
if t ~= 'hash' and t ~= 'none' then
  return redis.error_reply('SIMHASH_FOREIGN the key ' .. R .. ' holds a ' .. t .. ', not a hash')
end
if op == 'get' then  -- keys: each key's entry, {} where none
  local out = {}
  for i = 2, #ARGV do
    local v = redis.call('HGET', R, ARGV[i])
    out[#out + 1] = v and {v} or {}
  end
  return out
elseif op == 'put' then
  -- (key, expected entry ('': none, '*': any), entry ('': delete))*: all or nothing; {0} where an
  -- entry is not the expected one, else {1, the old entries ('': none)}
  for i = 2, #ARGV, 3 do
    if ARGV[i + 1] ~= '*' and (redis.call('HGET', R, ARGV[i]) or '') ~= ARGV[i + 1] then return {0} end
  end
  local out = {1}
  for i = 2, #ARGV, 3 do
    out[#out + 1] = redis.call('HGET', R, ARGV[i]) or ''
    if ARGV[i + 2] == '' then redis.call('HDEL', R, ARGV[i]) else redis.call('HSET', R, ARGV[i], ARGV[i + 2]) end
  end
  return out
elseif op == 'hot' then  -- the keys with a hot state, joined by 0xFF, and their hot states, concatenated
  local all = redis.call('HGETALL', R)
  local keys, hots = {}, {}
  for j = 1, #all, 2 do
    local v = all[j + 1]
    if bit.band(string.byte(v, 1), 4) ~= 0 then
      keys[#keys + 1] = all[j]
      hots[#hots + 1] = string.sub(v, 2, 1 + HW)
    end
  end
  return {table.concat(keys, '\255'), table.concat(hots)}
end
return redis.error_reply('SIMHASH_BADOP ' .. tostring(op))
""".replace("HW", str(HOT_WIDTH))


def _crc_table() -> str:
    """zlib's CRC-32 table as a Lua table literal (indexed from 0), each entry a signed 32-bit
    word as Lua's ``bit`` library returns them."""
    out = []
    for v in range(256):
        c = v
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        out.append(str(c - (1 << 32) if c >= 1 << 31 else c))
    return "{[0] = " + ", ".join(out) + "}"


def _bits8_table() -> str:
    """Each byte's 8 bits, most significant first, as a Lua table literal (indexed from 0)."""
    return "{[0] = " + ", ".join(f"'{v:08b}'" for v in range(256)) + "}"


def main_lua(layout: TableLayout) -> str:
    segs = "{" + ", ".join("{" + ", ".join(f"{{{s}, {w}}}" for s, _, w in segs) + "}" for segs in layout.segments) + "}"
    return _MAIN_LUA % {
        "vw": layout.value_width,
        "tables": len(layout.tables),
        "bucket_bits": BUCKET_BITS,
        "bits": layout.bits,
        "segs": segs,
        "key_bits": "{" + ", ".join(str(kb) for kb in layout.key_bits) + "}",
        "shards": SHARDS,
        "hot_width": HOT_WIDTH,
        "crc": _crc_table(),
        "bits8": _bits8_table(),
    }
