"""autoopt M2, LaTeX -> Pyomo: the rule-based and the learned (seq2seq) translators, their train
and evaluate stages, the MLflow pyfunc, the sandbox that runs generated scripts and the
equivalence judge."""
