"""The engine, the models and the command line on the real local models."""
