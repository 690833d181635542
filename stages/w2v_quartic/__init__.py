"""w2v_quartic: the quartic approximation of word2vec (Karkada, Simon, Bahri, DeWeese, arXiv 2502.09863).

Steps: ``train`` (full-batch SGNS and its quartic approximation from small init, gensim's
Word2Vec as the baseline) and ``evaluate`` (closed form, predicted step times, plateaus,
overlaps, downstream scores, plots). The maths lives in :mod:`.model` (torch losses and
training), :mod:`.theory` (target matrix, closed form, learning times, effective rank) and
:mod:`.scores` (downstream scores); :mod:`.baseline` runs gensim.
"""
