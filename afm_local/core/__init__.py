"""The pure algorithm, free of I/O: types, config, protocols, tags, scoring, packing, render,
accounting and the baselines. Nothing here imports a model, a file or another layer."""
