"""WildBox domain code with no Beam: the synthetic drone-segment generator (``synth``)."""
