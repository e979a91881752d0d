-- functions/evaluation: accuracy, binary_accuracy, classification_summary
-- (with precision, recall, fbeta_score, f1_score) and r2_score.
return require('chainer.functions._family')('evaluation',
  { 'accuracy', 'binary_accuracy', 'classification_summary', 'r2_score' })
