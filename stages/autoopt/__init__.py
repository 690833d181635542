"""autoopt (part 1): an AutoOpt-11k-format dataset (generated, or the published one) and M1,
image -> LaTeX. Sinha, Arora & Pujara, arXiv 2510.21436. Heavy imports live inside the stages."""
