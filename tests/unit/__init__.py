"""Fast tests of the pure logic: fake counter and embedder (``tests.support.fakes``), no model files."""
