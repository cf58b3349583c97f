"""What the tests share, imported by name (``from tests.support.fakes import fake_components``):

* ``fakes``: a word counter and a bag-of-words embedder for the unit tier;
* ``reference_packing``: the plain packer the array packer is property-tested against;
* ``real``: the real components, loaded once per test process, and the ``afm-local`` command;
* ``servers``: real ``afm-local serve`` processes on free loopback ports;
* ``stores``: a private PostgreSQL cluster and reading a store straight from its database.
"""
