"""Text tools on top of the core: the lexicon and language rule, the hard-constraint rules, the
extractive compressor and topic names, the summary guard and the layered classifier."""
