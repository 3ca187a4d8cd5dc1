"""What runs a run, grouped by flow (pool -> task -> result -> ledger):

* ``counting``: one partition counted on a node's devices -- the array task (``task``), its scheduler over the
  devices (``schedule``, ``chunking``, ``partial``, ``rate_hints``), the devices' loops and processes
  (``device_loop``, ``device_process``, ``children``), the partition's states (``stream``, ``refine``), and what
  a task owns on disk beside its result (``claims``, ``tasklog``, ``solutions``), under the rules of its
  environment (``environment``).
* ``ledger``: results turned into a ledger and trusted -- ``collect`` (the single writer of the ledger),
  ``verify`` (re-counts and their comparison), ``merge`` (another site's results), ``evidence`` and ``report``.
* ``local``: the local executor, which runs the counting flow in worker processes and then collects.
* ``search`` and ``estimate``: the commands that count no run (one solution by local search; device-hours).

Imports follow the flow: nothing in ``counting`` imports ``ledger`` (or the modules here), and ``ledger``
reads what counting wrote without importing its scheduling (tests/test_layout.py holds them to it).
"""
