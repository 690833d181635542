"""autoopt M3, solving: the benchmark problems, Pyomo -> casadi, BOBD, its baselines (IPOPT
multi-start, a GA, NSGA-II), what BOBD and the baselines share (core) and the m3-evaluate stage."""
