-- chainer.links.caffe: importing Caffe models (CaffeFunction).
return { CaffeFunction = require('chainer.links.caffe.caffe_function').CaffeFunction }
