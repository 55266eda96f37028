"""How long a collective's bytes take on the chip's links: the link half of the step model.

TPU: a ring over an ICI axis moves a device's bytes over two one-way links (both directions
of the ring), so time = moved bytes / (2 x per-link bandwidth).

GPU (NCCL / RCCL), an alpha-beta model with nccl-tests' conventions: `moved` is already the
bus bytes (all-reduce 2(n-1)/n x S, all-gather and reduce-scatter (n-1)/n x S, all-to-all
(n-1)/n x S), and time = alpha + moved / bus bandwidth, where
- inside one scale-up domain (NVLink / Infinity Fabric: `link_domain` GPUs, 8 on a DGX) the
  bus bandwidth is the GPU's one-way link bandwidth;
- a group that spans domains runs its rings or trees over the network: NCCL splits the
  data over one channel per GPU of the group in a domain, each through its own NIC, so the
  bus bandwidth is min(link, NIC x members per domain); an all-to-all sends the share of its
  bytes bound for other domains through its own GPU's NIC alone;
- alpha is the chip's `link_latency_s` per collective (twice that across domains): what a
  128-byte all-reduce costs, where the bandwidth term is nothing.

Which domain a device is in: device id // link_domain (JAX orders devices process by
process), `--gpus-per-node` overriding the chip's domain size.
"""

from __future__ import annotations

from dataclasses import dataclass

from hloscope.cost.chips import Chip

NETWORK = "network (InfiniBand/RoCE)"
SCALE_UP = {"nvidia": "NVLink", "amd": "Infinity Fabric"}


@dataclass(frozen=True)
class LinkTime:
    seconds: float | None
    links: str  # what bounds it, in words: ICI, NVLink, network (InfiniBand/RoCE)
    crosses_domains: bool = False


def scale_up_word(chip: Chip | None) -> str:
    if chip is None:
        return "links"
    if chip.platform == "tpu":
        return "ICI"
    if chip.platform == "gpu":
        return SCALE_UP.get(chip.vendor, "NVLink")
    return "links"


def members_per_domain(groups: list[list[int]], domain: int) -> tuple[int, int]:
    """(domains the first group spans, fewest members it has in one of them)."""
    if not groups or not groups[0] or domain <= 0:
        return 1, len(groups[0]) if groups and groups[0] else 1
    counts: dict[int, int] = {}
    for d in groups[0]:
        counts[d // domain] = counts.get(d // domain, 0) + 1
    return len(counts), min(counts.values())


def link_time(chip: Chip | None, op: str, moved: float, n: int, groups: list[list[int]]) -> LinkTime:
    """The time the collective's bytes take on the links (None without link numbers)."""
    word = scale_up_word(chip)
    if chip is None or not chip.ici_bandwidth:
        return LinkTime(None, word)
    if chip.platform != "gpu":
        return LinkTime(moved / (2 * chip.ici_bandwidth), word)
    alpha = chip.link_latency_s or 0.0
    link = chip.ici_bandwidth
    domain = chip.link_domain or 0
    if op == "collective-permute":
        pairs = [tuple(g) for g in groups if len(g) == 2]
        crosses = bool(domain) and any(a // domain != b // domain for a, b in pairs)
    else:
        spans, local = members_per_domain(groups, domain)
        crosses = spans > 1
    if not crosses or not chip.nic_bandwidth:
        return LinkTime(alpha + moved / link if moved else (alpha if n > 1 else 0.0), word)
    nic = chip.nic_bandwidth
    if op == "collective-permute":
        return LinkTime(2 * alpha + moved / nic, NETWORK, True)
    if op in ("all-to-all", "ragged-all-to-all"):
        # of the (n-1)/n x S it sends, (n - local)/n x S leaves the domain through its NIC
        remote = moved * (n - local) / (n - 1) if n > 1 else 0.0
        near = moved - remote
        return LinkTime(2 * alpha + max(remote / nic, near / link), NETWORK, True)
    return LinkTime(2 * alpha + moved / min(link, nic * local), NETWORK, True)
