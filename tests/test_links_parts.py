"""The GPU alpha-beta link model's branches, each worked by hand from the chip table's
numbers (the mutation run found the permute and all-to-all branches untested): a
collective-permute inside or across scale-up domains, an all-to-all's remote share, empty
and single-member collectives, and a chip without a NIC figure."""

from __future__ import annotations

import dataclasses

import pytest

from hloscope.cost.chips import get_chip
from hloscope.sharding.links import NETWORK, LinkTime, link_time, members_per_domain, scale_up_word

H100 = get_chip("h100")
MB = 1e6


def test_the_table_has_what_the_model_needs():
    assert H100.link_domain == 8 and H100.link_latency_s > 0 and H100.nic_bandwidth > 0
    assert H100.ici_bandwidth > H100.nic_bandwidth


def test_a_permute_inside_a_domain_runs_on_nvlink():
    a, link = H100.link_latency_s, H100.ici_bandwidth
    t = link_time(H100, "collective-permute", 8 * MB, 2, [[0, 1], [1, 2], [7, 6]])
    assert t == LinkTime(pytest.approx(a + 8 * MB / link), "NVLink", False)


def test_a_permute_across_domains_runs_on_the_nic():
    a, nic = H100.link_latency_s, H100.nic_bandwidth
    t = link_time(H100, "collective-permute", 8 * MB, 2, [[0, 1], [7, 8]])  # 7 -> 8 leaves node 0
    assert t == LinkTime(pytest.approx(2 * a + 8 * MB / nic), NETWORK, True)
    # (a group of three is no pair: it does not decide)
    assert link_time(H100, "collective-permute", 8 * MB, 2, [[0, 9, 10]]).links == "NVLink"


def test_an_all_to_all_across_domains_sends_its_remote_share_through_its_nic():
    a, link, nic = H100.link_latency_s, H100.ici_bandwidth, H100.nic_bandwidth
    group = list(range(16))  # two nodes of 8: 8 local members
    moved = 15 * MB
    remote = moved * (16 - 8) / (16 - 1)  # 8 of the 15 others are remote: 8 MB
    near = moved - remote  # 7 MB over NVLink
    t = link_time(H100, "all-to-all", moved, 16, [group])
    assert t == LinkTime(pytest.approx(2 * a + max(remote / nic, near / link)), NETWORK, True)
    assert link_time(H100, "ragged-all-to-all", moved, 16, [group]) == t
    # a ring or tree over the same group: min(link, NIC x members per node)
    ring = link_time(H100, "all-reduce", moved, 16, [group])
    assert ring == LinkTime(pytest.approx(2 * a + moved / min(link, nic * 8)), NETWORK, True)


def test_an_all_to_all_whose_nvlink_share_is_the_slower_is_bound_by_it():
    """With a NIC twice as fast as NVLink (a made-up chip), the 7 MB of an all-to-all over two
    nodes of 8 that stay in the node take longer over NVLink than the 8 MB that leave
    through the NIC: the near share bounds it."""
    fast_nic = dataclasses.replace(H100, nic_bandwidth=2 * H100.ici_bandwidth)
    a, link, nic = H100.link_latency_s, H100.ici_bandwidth, fast_nic.nic_bandwidth
    near, remote = 7 * MB, 8 * MB  # of the 15 MB sent, 7/15 to the node's own 7 others
    assert near / link > remote / nic
    t = link_time(fast_nic, "all-to-all", 15 * MB, 16, [list(range(16))])
    assert t == LinkTime(pytest.approx(2 * a + near / link), NETWORK, True)


def test_empty_and_single_member_collectives():
    a = H100.link_latency_s
    assert link_time(H100, "all-reduce", 0, 8, [list(range(8))]).seconds == pytest.approx(a)
    assert link_time(H100, "all-reduce", 0, 1, [[0]]).seconds == 0.0
    assert link_time(H100, "all-reduce", 4 * MB, 1, [[3]]).seconds == pytest.approx(a + 4 * MB / H100.ici_bandwidth)


def test_without_a_nic_figure_or_a_domain_it_stays_on_the_links():
    no_nic = dataclasses.replace(H100, nic_bandwidth=0)
    t = link_time(no_nic, "all-reduce", 8 * MB, 16, [list(range(16))])
    assert t == LinkTime(pytest.approx(H100.link_latency_s + 8 * MB / H100.ici_bandwidth), "NVLink", False)
    no_domain = dataclasses.replace(H100, link_domain=0, link_latency_s=0)
    assert link_time(no_domain, "collective-permute", 8 * MB, 2, [[0, 9]]) == \
        LinkTime(pytest.approx(8 * MB / H100.ici_bandwidth), "NVLink", False)
    assert link_time(None, "all-reduce", 8 * MB, 2, [[0, 1]]) == LinkTime(None, "links")


def test_domains_and_words():
    assert members_per_domain([[0, 1, 8, 9, 10]], 8) == (2, 2)
    assert members_per_domain([[0, 1, 2]], 8) == (1, 3)
    assert members_per_domain([[4, 5]], 0) == (1, 2) and members_per_domain([], 8) == (1, 1)
    assert scale_up_word(get_chip("mi300x")) == "Infinity Fabric" and scale_up_word(H100) == "NVLink"
    assert scale_up_word(get_chip("tpu-v5e")) == "ICI" and scale_up_word(get_chip("cpu")) == "links"
    assert scale_up_word(None) == "links"
    # a GPU of a vendor the table has no word for (a --chip-file chip): NVLink, as on NVIDIA's
    assert scale_up_word(dataclasses.replace(H100, vendor="")) == "NVLink"
    # a domain of one device: each member is its own domain
    assert members_per_domain([[0, 1, 2]], 1) == (3, 1)


def test_an_all_to_all_of_two_gpus_in_two_nodes_sends_all_of_it_over_the_network():
    """Groups {0, 8} on H100s (8 to a node): one member per node, so the whole of what each
    GPU sends leaves through its NIC: 2 alpha + moved / NIC bandwidth."""
    h100 = get_chip("h100")
    moved = 64e6
    t = link_time(h100, "all-to-all", moved, 2, [[0, 8]])
    assert t.crosses_domains and t.seconds == pytest.approx(2 * h100.link_latency_s + moved / h100.nic_bandwidth)
