"""A loaded site written back as a site file, in the units an admin writes (``2d``,
``64GB``, ``42%``), such that loading the text gives the same site again.

A sweep cell's site is the base site with some keys changed; ``queuesim sweep show CELL
--site`` prints it with :func:`site_yaml` so that ``queuesim run`` can reproduce the cell.
Keys left at their defaults are left out.
"""

from __future__ import annotations

from typing import Any

import yaml

from queuesim.site.model import Site
from queuesim.site.site_draft import format_memory, format_span

#: the keys holding durations (seconds once loaded), by section
_DURATIONS = {
    "queues": ("max_walltime", "default_walltime"),
    "fairshare": ("half_life", "decay_interval", "usage_log"),
}


def _span(seconds: float) -> str | float:
    """Whole seconds as ``14d``/``36h``/``90m``/``7s``; a fraction of a second as it is."""
    return format_span(seconds) if float(seconds).is_integer() else seconds


def site_document_of(site: Site) -> dict[str, Any]:
    """The site as a document :func:`queuesim.site.loading.load_site` reads back to it."""
    doc: dict[str, Any] = site.model_dump(mode="json", exclude_defaults=True)
    doc.setdefault("name", site.name)
    for cluster in doc.get("clusters", []):
        memory = cluster.get("memory_per_node")
        if memory is not None and format_memory(memory) != str(memory):
            cluster["memory_per_node"] = format_memory(memory)
    for queue in doc.get("queues", []):
        for key in _DURATIONS["queues"]:
            if queue.get(key) is not None:
                queue[key] = _span(queue[key])
        pool = queue.get("cpu_pool")
        if isinstance(pool, float):  # a fraction of the queue's clusters, written as 'N%'
            queue["cpu_pool"] = f"{pool * 100:.10g}%"
    fairshare = doc.get("fairshare", {})
    for key in _DURATIONS["fairshare"]:
        if fairshare.get(key) is not None:
            fairshare[key] = _span(fairshare[key])
    return doc


def site_yaml(site: Site) -> str:
    """The site as YAML text (see :func:`site_document_of`)."""
    return yaml.safe_dump(
        site_document_of(site),
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=None,  # lists and mappings of plain values on one line
    )
