"""The api's services: what the routes call that spans more than one table or reaches beyond the
database (NATS, the cluster, the apps' APIs, mail).

Layers, each importing only those below it: ``routes`` → ``services`` → ``crud`` / ``compile`` and
``compilers`` → ``models``, ``schemas``, ``canvas``, ``catalogue`` → ``core``, ``db``, ``errors``,
``limits`` (checked by ``tools/check_imports.py``: no cycle, no import hidden in a function).
"""
