"""The package version, in a module of its own so that code inside the package never imports the facade."""

__version__ = "0.1.0"
