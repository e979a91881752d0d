-- examples/seq2seq/bleu.lua: corpus BLEU (Papineni et al. 2002) as NLTK's
-- corpus_bleu computes it, which Chainer's seq2seq example reports.
--
--   local bleu = dofile('examples/seq2seq/bleu.lua')
--   bleu.corpus_bleu(list_of_references, hypotheses, {weights =, smoothing =, epsilon =})
--   bleu.sentence_bleu(references, hypothesis, opts)
--
-- A sentence is a Lua array of tokens (strings or numbers); each
-- hypothesis has a Lua array of one or more references.
--
-- Corpus BLEU is not the mean of sentence BLEUs: for each order n (1..4 by
-- default) the clipped n-gram matches and the hypothesis n-gram counts are
-- summed over the corpus first (a hypothesis with no n-grams of order n
-- still adds 1 to the count, as NLTK does), then
--   BLEU = BP * exp(sum_n w_n log p_n),  p_n = matches_n / count_n,
--   BP = 1 if c > r, 0 if c = 0, else exp(1 - r/c),
-- c the total hypothesis length and r the sum of the reference lengths
-- closest to each hypothesis length (the shorter one on a tie).
-- Matches of an n-gram are clipped at its largest count in any one reference.
-- No unigram match at all gives 0.  Smoothing (NLTK's SmoothingFunction):
--   'method1' (default here, as Chainer's example): p_n = epsilon / count_n
--             when matches_n = 0 (epsilon 0.1);
--   'method0' or false: no smoothing; a zero p_n makes the score 0.
local M = {}

-- n-gram -> count for tokens[1..#tokens]
local function ngram_counts(tokens, n)
  local counts, total = {}, 0
  local sep = '\1'
  for i = 1, #tokens - n + 1 do
    local parts = {}
    for k = 0, n - 1 do parts[k + 1] = tostring(tokens[i + k]) end
    local key = table.concat(parts, sep)
    counts[key] = (counts[key] or 0) + 1
    total = total + 1
  end
  return counts, total
end
M.ngram_counts = ngram_counts

-- clipped matches and the (at least 1) n-gram count of one hypothesis
function M.modified_precision(references, hypothesis, n)
  local hc, total = ngram_counts(hypothesis, n)
  local max_ref = {}
  for _, ref in ipairs(references) do
    local rc = ngram_counts(ref, n)
    for k, c in pairs(rc) do
      if hc[k] and (max_ref[k] or 0) < c then max_ref[k] = c end
    end
  end
  local matches = 0
  for k, c in pairs(hc) do matches = matches + math.min(c, max_ref[k] or 0) end
  return matches, math.max(1, total)
end

function M.closest_ref_length(references, hyp_len)
  local best = nil
  for _, ref in ipairs(references) do
    local r = #ref
    if best == nil or math.abs(r - hyp_len) < math.abs(best - hyp_len)
        or (math.abs(r - hyp_len) == math.abs(best - hyp_len) and r < best) then
      best = r
    end
  end
  return best
end

function M.brevity_penalty(ref_len, hyp_len)
  if hyp_len > ref_len then return 1 end
  if hyp_len == 0 then return 0 end
  return math.exp(1 - ref_len / hyp_len)
end

function M.corpus_bleu(list_of_references, hypotheses, opts)
  opts = opts or {}
  if type(list_of_references) ~= 'table' or type(hypotheses) ~= 'table' then
    error('corpus_bleu: list_of_references and hypotheses must be Lua arrays', 2)
  end
  if #list_of_references ~= #hypotheses then
    error(string.format('corpus_bleu: %d hypotheses but %d reference lists (expected the same number)',
      #hypotheses, #list_of_references), 2)
  end
  local weights = opts.weights or { 0.25, 0.25, 0.25, 0.25 }
  local smoothing = opts.smoothing
  if smoothing == nil then smoothing = 'method1' end
  if smoothing ~= false and smoothing ~= 'method0' and smoothing ~= 'method1' then
    error("corpus_bleu: smoothing must be 'method1', 'method0' or false (got " .. tostring(smoothing) .. ')', 2)
  end
  local epsilon = opts.epsilon or 0.1
  local num, den = {}, {}
  for n = 1, #weights do num[n], den[n] = 0, 0 end
  local hyp_len, ref_len = 0, 0
  for i, hyp in ipairs(hypotheses) do
    local refs = list_of_references[i]
    if type(refs) ~= 'table' or #refs == 0 then
      error(string.format('corpus_bleu: hypothesis %d has no references', i), 2)
    end
    for n = 1, #weights do
      local m, c = M.modified_precision(refs, hyp, n)
      num[n], den[n] = num[n] + m, den[n] + c
    end
    hyp_len = hyp_len + #hyp
    ref_len = ref_len + M.closest_ref_length(refs, #hyp)
  end
  if #hypotheses == 0 or num[1] == 0 then return 0 end
  local bp = M.brevity_penalty(ref_len, hyp_len)
  local s = 0
  for n = 1, #weights do
    local p
    if num[n] == 0 then
      if smoothing == 'method1' then p = epsilon / den[n] else return 0 end
    else
      p = num[n] / den[n]
    end
    s = s + weights[n] * math.log(p)
  end
  return bp * math.exp(s)
end

function M.sentence_bleu(references, hypothesis, opts)
  return M.corpus_bleu({ references }, { hypothesis }, opts)
end

return M
