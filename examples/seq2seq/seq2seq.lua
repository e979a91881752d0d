-- examples/seq2seq/seq2seq.lua: Chainer's sequence-to-sequence translation
-- example -- an encoder-decoder of stacked NStepLSTMs (EmbedID inputs,
-- Linear output, greedy decoding), trained with Adam and evaluated by
-- corpus BLEU -- on the English-Japanese corpus small_parallel_enja.
--
--   chainlua examples/seq2seq/seq2seq.lua                                 (en -> ja, defaults below)
--   chainlua examples/seq2seq/seq2seq.lua SOURCE TARGET [--validation-source F --validation-target F]
--
-- Without positional arguments the files come from
-- $CHAINER_DATASET_ROOT/small_parallel_enja/ (train.en.000 -> train.ja.000,
-- validated on dev.en -> dev.ja).  The vocabularies are built from the
-- training files (words seen at least --min-freq times); <UNK> = 0, <EOS> = 1.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local L = require 'chainer.links'
local T = require 'chainer.tensor'
local iterators = require 'chainer.iterators'
local optimizers = require 'chainer.optimizers'
local serializers = require 'chainer.serializers'
local training = require 'chainer.training'
local extensions = require 'chainer.training.extensions'
local ffi = require 'ffi'

local here = (arg and arg[0] or ''):match('^(.*)/[^/]*$') or '.'
local bleu = dofile(here .. '/bleu.lua')

local UNK, EOS = 0, 1

local ap = require('chainer.utils.argparse')('Chainer example: seq2seq')
ap.prog = 'chainlua examples/seq2seq/seq2seq.lua [SOURCE TARGET]'
ap:option('--validation-source', { help = 'Source sentence list for validation (default: dev.en)' })
ap:option('--validation-target', { help = 'Target sentence list for validation (default: dev.ja)' })
ap:option('--batchsize', '-b', { type = 'number', default = 64, help = 'Number of sentence pairs in each mini-batch' })
ap:option('--epoch', '-e', { type = 'number', default = 20, help = 'Number of sweeps over the dataset to train' })
ap:option('--resume', '-r', { default = '', help = 'Resume the training from snapshot' })
ap:option('--save', '-s', { default = '', help = 'Save a snapshot of the trainer here after training' })
ap:option('--unit', '-u', { type = 'number', default = 256, help = 'Number of units (Chainer: 1024)' })
ap:option('--layer', '-l', { type = 'number', default = 2, help = 'Number of layers (Chainer: 3)' })
ap:option('--min-source-sentence', { type = 'number', default = 1, help = 'Minimum length of source sentence' })
ap:option('--max-source-sentence', { type = 'number', default = 50, help = 'Maximum length of source sentence' })
ap:option('--min-target-sentence', { type = 'number', default = 1, help = 'Minimum length of target sentence' })
ap:option('--max-target-sentence', { type = 'number', default = 50, help = 'Maximum length of target sentence' })
ap:option('--log-interval', { type = 'number', default = 50, help = 'Number of iterations to show log' })
ap:option('--validation-interval', { type = 'number', default = 500,
  help = 'Number of iterations to evaluate the model with validation dataset' })
ap:option('--device', '-d', { default = '-1', help = "Device specifier: -1 or 'cpu' for CPU, N or 'cuda:N' for a GPU",
  aliases = { '--gpu', '-g' } })
ap:option('--out', '-o', { default = 'result', help = 'Directory to output the result' })
-- chainlua extras
ap:option('--min-freq', { type = 'number', default = 1, help = 'Vocabulary: words seen at least this often in training' })
ap:option('--train-size', { type = 'number', default = 0, help = 'Use only the first N training pairs (0: all)' })
ap:option('--validation-size', { type = 'number', default = 0, help = 'Use only the first N validation pairs for BLEU (0: all)' })
ap:option('--dropout', { type = 'number', default = 0.1, help = 'Dropout ratio of the NStepLSTMs' })
ap:option('--seed', { type = 'number', help = 'Random seed (weights, shuffling, dropout)' })
ap:option('--threads', { type = 'number', help = 'CPU threads for the math kernels' })
ap:flag('--noprogress', { help = 'No progress bar' })
ap:flag('--eval-only', { help = 'With --resume: no training; print the BLEU and five translations of the snapshot' })
-- positional SOURCE TARGET
local argv, positional = {}, {}
do
  local i = 1
  while arg and i <= #arg do
    local a = arg[i]
    if a:sub(1, 1) == '-' and #a > 1 then
      argv[#argv + 1] = a
      -- options with a value (every option here but the flags)
      if not a:find('=', 1, true) and a ~= '--noprogress' and a ~= '--eval-only' and a ~= '-h' and a ~= '--help' then
        i = i + 1
        argv[#argv + 1] = arg[i]
      end
    else
      positional[#positional + 1] = a
    end
    i = i + 1
  end
end
local args = ap:parse(argv)
if args.seed then T.random.seed(args.seed) end
if args.threads then chainer.set_num_threads(args.threads) end
local device = tonumber(args.device) or args.device

local root = (os.getenv('CHAINER_DATASET_ROOT') or ((os.getenv('HOME') or '') .. '/.chainer/dataset')) ..
  '/small_parallel_enja/'
local SOURCE = positional[1] or (root .. 'train.en.000')
local TARGET = positional[2] or (root .. 'train.ja.000')
local VSOURCE = args.validation_source or (positional[1] == nil and root .. 'dev.en' or nil)
local VTARGET = args.validation_target or (positional[2] == nil and root .. 'dev.ja' or nil)

---------------------------------------------------------------------------
-- data: sentences, vocabularies, id arrays
---------------------------------------------------------------------------
local function read_lines(path)
  local f, err = io.open(path, 'r')
  if not f then error("seq2seq: cannot open '" .. path .. "' (" .. tostring(err) .. ')', 0) end
  local out = {}
  for line in f:lines() do
    local words = {}
    for w in line:gmatch('%S+') do words[#words + 1] = w end
    out[#out + 1] = words
  end
  f:close()
  return out
end

-- word -> id for the words seen at least min_freq times, most frequent
-- first (ties alphabetical), after <UNK> = 0 and <EOS> = 1.
local function build_vocabulary(sentences, min_freq)
  local counts = {}
  for _, s in ipairs(sentences) do
    for _, w in ipairs(s) do counts[w] = (counts[w] or 0) + 1 end
  end
  local words = {}
  for w, c in pairs(counts) do if c >= min_freq then words[#words + 1] = w end end
  table.sort(words, function(a, b)
    if counts[a] ~= counts[b] then return counts[a] > counts[b] end
    return a < b
  end)
  local vocab = { ['<UNK>'] = UNK, ['<EOS>'] = EOS }
  for i, w in ipairs(words) do vocab[w] = i + 1 end
  return vocab, #words + 2
end

local function to_ids(words, vocab)
  local t = T.empty({ #words }, 'int32')
  local p = ffi.cast('int32_t*', t.ptr.data)
  for i, w in ipairs(words) do p[i - 1] = vocab[w] or UNK end
  return t
end

local function unknown_ratio(data)
  local unk, total = 0, 0
  for _, s in ipairs(data) do
    local p = ffi.cast('int32_t*', s.ptr.data) + s.ptr.offset
    for i = 0, s.size - 1 do
      if p[i] == UNK then unk = unk + 1 end
    end
    total = total + s.size
  end
  return total > 0 and unk / total or 0
end

print(os.date('[%Y-%m-%d %H:%M:%S]') .. ' Loading dataset... (this may take several minutes)')
local src_words, trg_words = read_lines(SOURCE), read_lines(TARGET)
if #src_words ~= #trg_words then
  error(string.format('seq2seq: %s has %d lines but %s has %d', SOURCE, #src_words, TARGET, #trg_words), 0)
end
if args.train_size > 0 then
  for i = #src_words, args.train_size + 1, -1 do src_words[i], trg_words[i] = nil, nil end
end
local source_ids, n_source = build_vocabulary(src_words, args.min_freq)
local target_ids, n_target = build_vocabulary(trg_words, args.min_freq)
local target_words = {}
for w, i in pairs(target_ids) do target_words[i] = w end
local source_words = {}
for w, i in pairs(source_ids) do source_words[i] = w end

local function in_range(n, lo, hi) return n >= lo and n <= hi end
local train_data = {}
local train_src, train_trg = {}, {}
for i = 1, #src_words do
  if in_range(#src_words[i], args.min_source_sentence, args.max_source_sentence)
      and in_range(#trg_words[i], args.min_target_sentence, args.max_target_sentence) then
    local x, y = to_ids(src_words[i], source_ids), to_ids(trg_words[i], target_ids)
    train_data[#train_data + 1] = { x, y }
    train_src[#train_src + 1], train_trg[#train_trg + 1] = x, y
  end
end
print('Dataset loaded.')
print(string.format('Source vocabulary size: %d', n_source))
print(string.format('Target vocabulary size: %d', n_target))
print(string.format('Train data size: %d', #train_data))
print(string.format('Train source unknown ratio: %.2f%%', unknown_ratio(train_src) * 100))
print(string.format('Train target unknown ratio: %.2f%%', unknown_ratio(train_trg) * 100))

local test_data = nil
if VSOURCE and VTARGET then
  local vs, vt = read_lines(VSOURCE), read_lines(VTARGET)
  test_data = {}
  local ts, tt = {}, {}
  for i = 1, #vs do
    if args.validation_size == 0 or #test_data < args.validation_size then
      local x, y = to_ids(vs[i], source_ids), to_ids(vt[i] or {}, target_ids)
      if x.size > 0 and y.size > 0 then
        test_data[#test_data + 1] = { x, y }
        ts[#ts + 1], tt[#tt + 1] = x, y
      end
    end
  end
  print(string.format('Validation data: %d', #test_data))
  print(string.format('Validation source unknown ratio: %.2f%%', unknown_ratio(ts) * 100))
  print(string.format('Validation target unknown ratio: %.2f%%', unknown_ratio(tt) * 100))
end

---------------------------------------------------------------------------
-- model
---------------------------------------------------------------------------
-- Embeds a Lua list of id sequences with one EmbedID call: concatenate,
-- embed, split back at the sequence boundaries.
local function sequence_embed(embed, xs)
  local bounds, pos = {}, 0
  for i = 1, #xs - 1 do
    pos = pos + xs[i].size
    bounds[i] = pos
  end
  local ex = embed(T.concat(xs, 0))
  if #xs == 1 then return { ex } end
  return F.split_axis(ex, bounds, 0)
end

local function reverse(x) return x:flip(0):contiguous() end

local Seq2seq = chainer.Chain:extend('Seq2seq')
function Seq2seq:init(n_layers, n_source_vocab, n_target_vocab, n_units, dropout)
  self.embed_x = L.EmbedID(n_source_vocab, n_units)
  self.embed_y = L.EmbedID(n_target_vocab, n_units)
  self.encoder = L.NStepLSTM(n_layers, n_units, n_units, dropout)
  self.decoder = L.NStepLSTM(n_layers, n_units, n_units, dropout)
  self.W = L.Linear(n_units, n_target_vocab)
  self.n_layers = n_layers
  self.n_units = n_units
end

-- xs, ys: Lua lists of int32 id sequences (source, target).
function Seq2seq:forward(xs, ys)
  local batch = #xs
  local xs_rev = {}
  for i = 1, batch do xs_rev[i] = reverse(xs[i]) end
  local eos = T.full({ 1 }, EOS, 'int32')
  local ys_in, ys_out = {}, {}
  local max_len = 0
  for i = 1, batch do
    ys_in[i] = T.concat({ eos, ys[i] }, 0)
    ys_out[i] = T.concat({ ys[i], eos }, 0)
    max_len = math.max(max_len, ys_out[i].size)
  end
  -- Both sequences are embedded in one call each.
  local exs = sequence_embed(self.embed_x, xs_rev)
  local eys = sequence_embed(self.embed_y, ys_in)
  -- The last hidden state of the encoder starts the decoder.
  local hx, cx = self.encoder(nil, nil, exs)
  local _, _, os_ = self.decoder(hx, cx, eys)
  -- The decoder outputs are padded to (batch, max_len, units); the padded
  -- target positions hold -1, which softmax_cross_entropy ignores.
  local h = F.pad_sequence(os_, max_len, 0)
  local t = T.full({ batch, max_len }, -1, 'int32')
  for i = 1, batch do t:slice({ i - 1, i }, { 0, ys_out[i].size }):copy_(ys_out[i]:reshape({ 1, ys_out[i].size })) end
  local y = self.W(F.reshape(h, { batch * max_len, self.n_units }))
  local loss = F.sum(F.softmax_cross_entropy(y, t:reshape({ batch * max_len }), { reduce = 'no' })) * (1 / batch)
  chainer.report({ loss = loss }, self)
  local n_words = 0
  for i = 1, batch do n_words = n_words + ys_out[i].size end
  chainer.report({ perp = math.exp(loss.array:item() * batch / n_words) }, self)
  return loss
end

-- Greedy decoding: a Lua list of Lua arrays of target ids (EOS excluded).
function Seq2seq:translate(xs, max_length)
  max_length = max_length or 100
  local batch = #xs
  local result = {}
  chainer.no_backprop_mode(function()
    chainer.using_config('train', false, function()
      local xs_rev = {}
      for i = 1, batch do xs_rev[i] = reverse(xs[i]) end
      local exs = sequence_embed(self.embed_x, xs_rev)
      local h, c = self.encoder(nil, nil, exs)
      local ys = T.full({ batch }, EOS, 'int32')
      local done, n_done = {}, 0
      for i = 1, batch do result[i] = {} end
      for _ = 1, max_length do
        local eys = F.split_axis(self.embed_y(ys), batch, 0)
        local hs
        h, c, hs = self.decoder(h, c, eys)
        local wy = self.W(F.concat(hs, 0))
        ys = wy.array:argmax({ axis = 1 }):astype('int32')
        local p = ffi.cast('int32_t*', ys.ptr.data) + ys.ptr.offset
        for i = 1, batch do
          if not done[i] then
            local id = p[i - 1]
            if id == EOS then done[i] = true; n_done = n_done + 1
            else result[i][#result[i] + 1] = id end
          end
        end
        if n_done == batch then break end
      end
    end)
  end)
  return result
end

---------------------------------------------------------------------------
-- training
---------------------------------------------------------------------------
local model = Seq2seq(args.layer, n_source, n_target, args.unit, args.dropout)
if device ~= -1 and device ~= 'cpu' then model:to_device(device) end
local optimizer = optimizers.Adam():setup(model)

-- A batch of pairs -> {xs, ys}: two Lua lists of variable-length int32
-- sequences (spread as forward(xs, ys)).
local function convert(batch, dev)
  local xs, ys = {}, {}
  for i, pair in ipairs(batch) do
    local x, y = pair[1], pair[2]
    if dev ~= nil and dev ~= -1 and dev ~= '-1' and dev ~= 'cpu' then x, y = x:to_device(dev), y:to_device(dev) end
    xs[i], ys[i] = x, y
  end
  return { xs, ys }
end

local train_iter = iterators.SerialIterator(train_data, args.batchsize)
local updater = training.StandardUpdater(train_iter, optimizer, { converter = convert, device = device })
local trainer = training.Trainer(updater, { args.epoch, 'epoch' }, { out = args.out })
trainer:extend(extensions.LogReport({ trigger = { args.log_interval, 'iteration' } }))
trainer:extend(extensions.PrintReport({ 'epoch', 'iteration', 'main/loss', 'main/perp', 'validation/main/bleu',
  'elapsed_time' }), { trigger = { args.log_interval, 'iteration' } })
if not args.noprogress then trainer:extend(extensions.ProgressBar({ update_interval = 10 })) end

local function words_of(ids, names)
  local out = {}
  for i, id in ipairs(ids) do out[i] = names[id] or '<UNK>' end
  return table.concat(out, ' ')
end
local function ids_of(t) return t:totable() end

local CalculateBleuClass
if test_data then
  -- CalculateBleu: translate the validation sources in batches and report
  -- the corpus BLEU of the results against the references.
  local CalculateBleu = training.Extension:extend('CalculateBleu')
  CalculateBleuClass = CalculateBleu
  CalculateBleu.trigger = { 1, 'epoch' }
  CalculateBleu.priority = training.PRIORITY_WRITER or 300
  function CalculateBleu:init(mdl, data, key, batch, max_length)
    self.model, self.data, self.key = mdl, data, key
    self.batch, self.max_length = batch or 100, max_length or 100
  end
  function CalculateBleu:evaluate()
    local references, hypotheses = {}, {}
    for i = 1, #self.data, self.batch do
      local sources = {}
      for j = i, math.min(i + self.batch - 1, #self.data) do
        sources[#sources + 1] = self.data[j][1]
        references[#references + 1] = { ids_of(self.data[j][2]) }
      end
      for _, hyp in ipairs(self.model:translate(sources, self.max_length)) do hypotheses[#hypotheses + 1] = hyp end
    end
    return bleu.corpus_bleu(references, hypotheses)
  end
  CalculateBleu.__call = function(self)
    chainer.report({ [self.key] = self:evaluate() })
  end

  -- Prints the translation of a random validation sentence.
  local function translate_one(_)
    local k = T.random.randint(0, #test_data, { 1 }, 'int32'):item() + 1
    local src, ref = test_data[k][1], test_data[k][2]
    local result = model:translate({ src })[1]
    print('# source : ' .. words_of(ids_of(src), source_words))
    print('# result : ' .. words_of(result, target_words))
    print('# expect : ' .. words_of(ids_of(ref), target_words))
  end
  trainer:extend(translate_one, { trigger = { args.validation_interval, 'iteration' }, name = 'translate' })
  trainer:extend(CalculateBleu(model, test_data, 'validation/main/bleu'),
    { trigger = { args.validation_interval, 'iteration' } })
end

trainer:extend(extensions.snapshot({ filename = 'snapshot_epoch_{.updater.iteration}' }),
  { trigger = { args.validation_interval, 'iteration' } })
if args.resume ~= '' then serializers.load_npz(args.resume, trainer) end

if not args.eval_only then trainer:run() end

if args.save ~= '' then
  serializers.save_npz(args.save, trainer)
end

-- Five translations of the first validation sentences (and, with
-- --eval-only, the BLEU of the loaded model).
if test_data then
  if args.eval_only then
    local ev = CalculateBleuClass(model, test_data, 'validation/main/bleu')
    print(string.format('validation/main/bleu: %.6g (iteration %d)', ev:evaluate(), updater.iteration))
  end
  local sources = {}
  for i = 1, math.min(5, #test_data) do sources[i] = test_data[i][1] end
  local results = model:translate(sources)
  for i = 1, #sources do
    print('# source : ' .. words_of(ids_of(test_data[i][1]), source_words))
    print('# result : ' .. words_of(results[i], target_words))
    print('# expect : ' .. words_of(ids_of(test_data[i][2]), target_words))
  end
end
