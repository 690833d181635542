"""autoopt M1, image -> LaTeX: the model, its train and evaluate stages, its MLflow pyfunc, and
the text metrics of its evaluation."""
