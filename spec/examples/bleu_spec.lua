-- examples/seq2seq/bleu.lua: corpus BLEU against hand-computed cases (the
-- arithmetic is in the comments) and NLTK's documented corpus_bleu example.
local bleu = dofile('examples/seq2seq/bleu.lua')

local function w(s)
  local t = {}
  for x in s:gmatch('%S+') do t[#t + 1] = x end
  return t
end

local function near(expected, actual, tol)
  assert(math.abs(expected - actual) <= (tol or 1e-12), string.format('expected %.17g, got %.17g', expected, actual))
end

describe('seq2seq bleu', function()
  it('a hypothesis equal to its reference scores 1', function()
    near(1, bleu.corpus_bleu({ { w 'the cat sat on the mat' } }, { w 'the cat sat on the mat' }))
    near(1, bleu.sentence_bleu({ w 'a b c d' }, w 'a b c d'))
  end)

  it('clips repeated words and smooths zero precisions with method1 (epsilon 0.1)', function()
    -- hyp 7 x "the", ref "the cat is on the mat": p1 = min(7, 2)/7 = 2/7,
    -- no "the the" in the ref: p2 = 0.1/6, p3 = 0.1/5, p4 = 0.1/4; c = 7 > r = 6: BP = 1
    local refs, hyp = { { w 'the cat is on the mat' } }, { w 'the the the the the the the' }
    near(math.exp(0.25 * (math.log(2 / 7) + math.log(0.1 / 6) + math.log(0.1 / 5) + math.log(0.1 / 4))),
      bleu.corpus_bleu(refs, hyp))
    near(0.039281465090051315, bleu.corpus_bleu(refs, hyp), 1e-15)
    -- without smoothing a zero precision gives 0
    assert.are.equal(0, bleu.corpus_bleu(refs, hyp, { smoothing = false }))
    assert.are.equal(0, bleu.corpus_bleu(refs, hyp, { smoothing = 'method0' }))
  end)

  it('applies the brevity penalty exp(1 - r/c); a too-short hypothesis has one n-gram slot per order', function()
    -- hyp "the cat" (c = 2), ref of 6 words: p1 = 2/2, p2 = 1/1, p3 = 0.1/max(1, 0), p4 = 0.1/1
    -- BLEU = exp(1 - 6/2) * (1 * 1 * 0.1 * 0.1)^(1/4) = e^-2 * sqrt(0.1)
    near(math.exp(-2) * math.sqrt(0.1), bleu.corpus_bleu({ { w 'the cat sat on the mat' } }, { w 'the cat' }))
    near(0.042796774281170055, bleu.sentence_bleu({ w 'the cat sat on the mat' }, w 'the cat'), 1e-15)
    assert.are.equal(1, bleu.brevity_penalty(5, 6))
    near(math.exp(1 - 6 / 5), bleu.brevity_penalty(6, 5))
    assert.are.equal(0, bleu.brevity_penalty(6, 0))
  end)

  it('sums the counts over the corpus before dividing (not a mean of sentence scores)', function()
    -- A = "a b c d" (exact), B = "e f" vs "x y" (nothing matches):
    -- p1 = (4 + 0)/(4 + 2), p2 = 3/(3 + 1), p3 = 2/(2 + 1), p4 = 1/(1 + 1); c = r = 6: BP = 1
    local refs = { { w 'a b c d' }, { w 'x y' } }
    local hyps = { w 'a b c d', w 'e f' }
    near((4 / 6 * 3 / 4 * 2 / 3 * 1 / 2) ^ 0.25, bleu.corpus_bleu(refs, hyps))
    -- while the sentence scores are 1 and 0
    near(1, bleu.sentence_bleu(refs[1], hyps[1]))
    assert.are.equal(0, bleu.sentence_bleu(refs[2], hyps[2]))
  end)

  it('clips at the largest count in any one reference and picks the closest (shorter on a tie) reference length', function()
    -- hyp "the the the", refs "the cat" / "the the dog": 'the' clipped at 2: p1 = 2/3;
    -- "the the" x2 vs 1 in ref 2: p2 = 1/2; p3 = 0.1/1; p4 = 0.1/max(1, 0); r = 3 (closest to 3): BP = 1
    near((2 / 3 * 1 / 2 * 0.1 * 0.1) ^ 0.25, bleu.corpus_bleu({ { w 'the cat', w 'the the dog' } }, { w 'the the the' }))
    near(0.24028114141347542, bleu.sentence_bleu({ w 'the cat', w 'the the dog' }, w 'the the the'), 1e-15)
    -- c = 5 with references of 4 and 6 words: r = 4 (tie -> shorter), so no penalty
    assert.are.equal(4, bleu.closest_ref_length({ w 'a b c d', w 'a b c d e f' }, 5))
    near(1, bleu.corpus_bleu({ { w 'a b c d', w 'a b c d e f' } }, { w 'a b c d e' }))
  end)

  it('matches NLTK corpus_bleu documentation example (0.5920...)', function()
    local hyp1 = w 'It is a guide to action which ensures that the military always obeys the commands of the party'
    local ref1a = w 'It is a guide to action that ensures that the military will forever heed Party commands'
    local ref1b = w 'It is the guiding principle which guarantees the military forces always being under the command of the Party'
    local ref1c = w 'It is the practical guide for the army always to heed the directions of the party'
    local hyp2 = w 'he read the book because he was interested in world history'
    local ref2a = w 'he was interested in world history because he read the book'
    near(0.5920778868801042, bleu.corpus_bleu({ { ref1a, ref1b, ref1c }, { ref2a } }, { hyp1, hyp2 }), 1e-13)
  end)

  it('works on word ids, and scores 0 without unigram matches or hypotheses', function()
    near(1, bleu.corpus_bleu({ { { 5, 7, 9, 11 } } }, { { 5, 7, 9, 11 } }))
    assert.are.equal(0, bleu.corpus_bleu({ { { 1, 2, 3 } } }, { { 4, 5, 6 } }))
    assert.are.equal(0, bleu.corpus_bleu({ { { 1, 2, 3 } } }, { {} }))
    assert.are.equal(0, bleu.corpus_bleu({}, {}))
    -- 10 and 1 0 are different n-grams (tokens are joined with a separator)
    assert.are.equal(0, bleu.corpus_bleu({ { { 10 } } }, { { 1, 0 } }, { weights = { 0.5, 0.5 } }))
  end)

  it('rejects mismatched inputs with messages naming corpus_bleu', function()
    assert.has_error(function() bleu.corpus_bleu({ { w 'a' } }, { w 'a', w 'b' }) end,
      'corpus_bleu: 2 hypotheses but 1 reference lists (expected the same number)')
    assert.has_error(function() bleu.corpus_bleu({ {} }, { w 'a' }) end, 'corpus_bleu: hypothesis 1 has no references')
    assert.has_error(function() bleu.corpus_bleu({ { w 'a' } }, { w 'a' }, { smoothing = 'method7' }) end)
  end)
end)
