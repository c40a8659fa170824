"""Golden schedules: small cases drawn and computed by hand, asserted start by start.

Every case is built with :mod:`builders` from jobs written as
``J(id, submit, runtime, cpus, requested=..., user=..., mem=...)`` (times in seconds;
``requested`` defaults to the runtime; ``mem`` is KiB per CPU). Unless a case says
otherwise the site is one node of 4 CPUs, the scheduler plans with the *requested* time
(``estimate: requested``) and jobs are killed at their requested time.

In the charts one column is one second, one row one CPU; a letter is the job holding that
CPU, ``.`` an idle CPU. CPUs are drawn as a count, not as specific cores (the CPU profile is
machine-wide); only the node-placement case draws real nodes.
"""

from __future__ import annotations

import numpy as np
import pytest
from builders import J, make_site, run_jobs

FOUR_CPUS = make_site(((1, 4),))


def test_fcfs_blocks_small_job_behind_the_head():
    """FCFS starts jobs in queue order: C would fit at t=2, but B (4 CPUs) is ahead of it."""
    # A: 2 CPUs 0..10; B: 4 CPUs, must wait for A -> 10..15;
    # C: 1 CPU, submitted at 2 while 2 CPUs are idle -> still waits for B: 15..17;
    # D: 2 CPUs, submitted at 3 -> starts with C at 15 (1 + 2 <= 4): 15..18.
    #
    #   t     0         10   15   20
    #   cpu   AAAAAAAAAABBBBBCC.
    #   cpu   AAAAAAAAAABBBBBDDD
    #   cpu   ..........BBBBBDDD
    #   cpu   ..........BBBBB...
    #           ^C,D arrive (t=2,3): blocked behind B although 2 CPUs are idle
    jobs = [J(1, 0, 10, 2), J(2, 1, 5, 4), J(3, 2, 2, 1), J(4, 3, 3, 2)]
    run = run_jobs(jobs, FOUR_CPUS, "fcfs")
    assert run.starts == {1: 0, 2: 10, 3: 15, 4: 15}
    assert run.ends == {1: 10, 2: 15, 3: 17, 4: 18}


def test_easy_backfills_short_job_but_not_one_that_delays_the_head():
    """EASY: a short job runs in the hole before the head's reservation; a long one, submitted
    earlier and fitting the same idle CPU, is not backfilled because it would delay the head."""
    # A: 3 CPUs 0..10 (1 CPU idle).  H: 4 CPUs, head, reservation at 10 (extra CPUs at 10: 0).
    # L (t=2, 1 CPU, 20 s): fits now but would run 2..22, over H's reservation with no extra
    #   CPU -> not backfilled; it runs after H: 20..40.
    # S (t=3, 1 CPU, 5 s): ends at 8 <= 10 -> backfilled at 3, ahead of L in the queue.
    #
    #   t     0         10        20        30        40
    #   cpu   AAAAAAAAAAHHHHHHHHHHLLLLLLLLLLLLLLLLLLLL
    #   cpu   AAAAAAAAAAHHHHHHHHHH....................
    #   cpu   AAAAAAAAAAHHHHHHHHHH....................
    #   cpu   ...SSSSS..HHHHHHHHHH....................
    jobs = [J(1, 0, 10, 3), J(2, 1, 10, 4), J(3, 2, 20, 1), J(4, 3, 5, 1)]
    run = run_jobs(jobs, FOUR_CPUS, "easy", {"record_reservations": True})
    assert run.starts == {1: 0, 2: 10, 3: 20, 4: 3}
    # only the head holds a reservation: H from t=3 (the first pass that can start anything),
    # then L once H has started and L is the head (t=10: reserved for 20, when H ends)
    assert run.reservations() == {2: 10, 3: 20}


def test_easy_backfills_a_long_job_on_the_head_extra_cpus():
    """EASY: a job that runs past the head's reservation is backfilled when it only uses the
    CPUs the head will not need then (the "extra" CPUs)."""
    # A: 3 CPUs 0..10.  H: 2 CPUs, head, reservation at 10; at 10 all 4 CPUs are free and H
    # needs 2, so 2 CPUs are extra.
    # X (t=2, 1 CPU, 30 s): runs 2..32, far past 10, but on an extra CPU -> backfilled.
    # H still starts at 10 (4 - 1 = 3 free >= 2).
    #
    #   t     0         10        20        30
    #   cpu   AAAAAAAAAAHHHHHHHHHH............
    #   cpu   AAAAAAAAAAHHHHHHHHHH............
    #   cpu   AAAAAAAAAA......................
    #   cpu   ..XXXXXXXXXXXXXXXXXXXXXXXXXXXXXX
    jobs = [J(1, 0, 10, 3), J(2, 1, 10, 2), J(3, 2, 30, 1)]
    for policy in ("easy", "conservative"):
        run = run_jobs(jobs, FOUR_CPUS, policy, {"record_reservations": True})
        assert run.starts == {1: 0, 2: 10, 3: 2}, policy
        assert run.reservations()[2] == 10, policy


# A: 2 CPUs 0..10.  H1 (t=1): 3 CPUs, 10 s.  H2 (t=2): 4 CPUs, 10 s.  B (t=3): 1 CPU, 30 s.
EASY_VS_CONSERVATIVE = [J(1, 0, 10, 2), J(2, 1, 10, 3), J(3, 2, 10, 4), J(4, 3, 30, 1)]


def test_easy_backfills_a_job_that_delays_the_second_waiting_job():
    """EASY protects only the head: B fits now and leaves the head H1 its 3 CPUs at 10 (B
    uses H1's one extra CPU), so it is backfilled - though it pushes H2 from 20 to 33."""
    # t=3: H1 reserved at 10 (free at 10: 4, H1 needs 3 -> 1 extra); H2 has no reservation;
    #      B: 1 CPU 3..33 on the extra CPU -> backfilled.  H2 (4 CPUs) waits for B: 33..43.
    #
    #   t     0         10        20        30        40
    #   cpu   AAAAAAAAAAHHHHHHHHHH.............KKKKKKKKKK       (H = H1, K = H2)
    #   cpu   AAAAAAAAAAHHHHHHHHHH.............KKKKKKKKKK
    #   cpu   ..........HHHHHHHHHH.............KKKKKKKKKK
    #   cpu   ...BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBKKKKKKKKKK
    run = run_jobs(EASY_VS_CONSERVATIVE, FOUR_CPUS, "easy", {"record_reservations": True})
    assert run.starts == {1: 0, 2: 10, 3: 33, 4: 3}
    # H2 has no reservation while H1 is the head; at t=10 it becomes the head and is
    # reserved for 33, when B ends
    assert run.reservations() == {2: 10, 3: 33}


def test_conservative_does_not_backfill_a_job_that_delays_any_reservation():
    """Conservative: B would not delay H1, but it would delay H2's reservation (20..30 needs
    all 4 CPUs), so B is not backfilled; it gets a reservation after H2 and keeps it."""
    # t=3: H1 reserved at 10..20; H2 at 20..30; B (1 CPU, 30 s) cannot run 3..33 without
    #      overlapping H2, and the 1-CPU hole 10..20 is too short -> reserved at 30.
    #
    #   t     0         10        20        30        40        50        60
    #   cpu   AAAAAAAAAAHHHHHHHHHHKKKKKKKKKKBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB
    #   cpu   AAAAAAAAAAHHHHHHHHHHKKKKKKKKKK..............................
    #   cpu   ..........HHHHHHHHHHKKKKKKKKKK..............................
    #   cpu   ....................KKKKKKKKKK..............................
    run = run_jobs(EASY_VS_CONSERVATIVE, FOUR_CPUS, "conservative", {"record_reservations": True})
    assert run.starts == {1: 0, 2: 10, 3: 20, 4: 30}
    assert run.reservations() == {2: 10, 3: 20, 4: 30}


def test_conservative_compresses_reservations_when_a_job_ends_early():
    """A (3 CPUs) requests 20 s but ends at 5: the reservations planned behind its requested
    end move forward, and the reserved jobs start earlier than first promised."""
    # Planned at t=1 (A believed to run until 20, 1 CPU idle):
    #   H: 4 CPUs, 10 s -> reserved 20..30;  C: 1 CPU, 30 s -> cannot run 1..31 (H needs all
    #   4 CPUs at 20) -> reserved 30..60.
    #
    #   t     0         10        20        30        40        50        60
    #   plan  AAAAAAAAAAAAAAAAAAAAHHHHHHHHHHCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC  (as believed at t=1)
    #
    # A ends at 5 -> the pass at 5 re-plans: H starts at once, C is re-reserved at 15.
    #
    #   t     0         10        20        30        40
    #   cpu   AAAAAHHHHHHHHHHCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC
    #   cpu   AAAAAHHHHHHHHHH..............................
    #   cpu   AAAAAHHHHHHHHHH..............................
    #   cpu   .....HHHHHHHHHH..............................
    jobs = [J(1, 0, 5, 3, requested=20), J(2, 1, 10, 4), J(3, 1, 30, 1)]
    run = run_jobs(jobs, FOUR_CPUS, "conservative", {"record_reservations": True})
    assert run.reservations() == {2: 20, 3: 30}
    assert run.starts == {1: 0, 2: 5, 3: 15}
    assert run.status == {1: "completed", 2: "completed", 3: "completed"}


def test_conservative_reserves_for_a_job_that_arrives_while_nothing_can_start():
    """Conservative backfilling gives every job its reservation when it arrives, even at an
    instant when no job can start (issue 14: a pass that started nothing used to plan
    nothing, so C and D got their first reservations only when A and B ended, and C,
    planned first then, jumped ahead of D's slot: C at 5, D at 8)."""
    # t=4: C (3 CPUs, requests 9 s) and D (2 CPUs, requests 3 s) arrive; A (requested until
    #      11) and B (until 6) hold all 4 CPUs, so nothing can start. Planned now:
    #      C at 11 (3 CPUs for 9 s only once A is gone), D at 6 in the 2 CPUs B frees.
    # t=5: A and B both end early. Compression, in priority order: C cannot move before
    #      D's slot ends (6..9 leaves 2 CPUs) -> 9; D then moves to now -> starts at 5.
    # t=6: E (1 CPU, 2 s) fits beside D and before C -> starts at once.
    # t=7: D ends early (requested 3 s, ran 2): C moves to 7 and starts.
    #
    #   t     0123456789
    #   cpu   .AAAADDCCC
    #   cpu   .AAAADDCCC
    #   cpu   ...BB.EE..
    #   cpu   ...BB..CCC
    jobs = [
        J(1, 1, 4, 2, requested=10),
        J(2, 3, 2, 2, requested=3),
        J(3, 4, 3, 3, requested=9),
        J(4, 4, 2, 2, requested=3),
        J(5, 6, 2, 1, requested=2),
    ]
    run = run_jobs(jobs, FOUR_CPUS, "conservative", {"record_reservations": True})
    assert run.reservations() == {3: 11, 4: 6}  # given at t=4, when nothing could start
    assert run.starts == {1: 1, 2: 3, 3: 7, 4: 5, 5: 6}
    assert run.ends == {1: 5, 2: 5, 3: 10, 4: 7, 5: 8}


def test_conservative_compression_never_delays_a_reservation():
    """DESIGN.md: "conservative reservations never delayed"; compression may only move
    reservations forward. 5 CPUs, requested-time estimates.

    Regression: conservative used to re-plan every reservation from scratch in queue order
    at each pass, so J3 moved into J4's slot and J4 started at 15, 10 s after its promise."""
    # t=0: J1 2 CPUs (requests 20, really ends at 3), J2 2 CPUs 0..5; 1 CPU idle.
    # t=1: J3 5 CPUs 10 s -> reserved 20..30;  J4 3 CPUs 10 s -> reserved 5..15 (3 CPUs are
    #      free 5..20 by the estimates); J5 1 CPU 100 s -> reserved 30..130.
    #
    #   t     0         10        20        30
    #   plan  JJJJJJJJJJJJJJJJJJJJ333333333355555...     (J1 as believed: until 20)
    #   plan  22222.....................
    #   plan  .....444444444433333333333
    #
    # t=3: J1 ends early. Compression keeps J4 at 5 or moves it forward (it could even
    #      start at 3: 3 CPUs are free until J3, which is reserved for 20, needs them).
    #      Re-planning from scratch in queue order would give J3 5..15 first, then J4
    #      15..25: 10 s past the reservation J4 was given.
    jobs = [
        J(1, 0, 3, 2, requested=20),
        J(2, 0, 5, 2),
        J(3, 1, 10, 5),
        J(4, 1, 10, 3),
        J(5, 1, 100, 1),
    ]
    site = make_site(((1, 5),))
    run = run_jobs(jobs, site, "conservative", {"record_reservations": True})
    promised = run.reservations()
    assert promised == {3: 20, 4: 5, 5: 30}
    late = {j: (promised[j], run.starts[j]) for j in promised if run.starts[j] > promised[j]}
    assert late == {}, f"jobs started after their first reservation (promised, actual): {late}"


# Two nodes of 4 CPUs and 8 KiB each; memory is per CPU.
TWO_NODES_8K = make_site(((2, 4, 8),))


@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative"])
def test_memory_per_cpu_prevents_packing_on_one_node(policy):
    """P asks 4 CPUs with 4 KiB each: a node (8 KiB) holds only 2 of them, so P is split
    2 + 2 over both nodes, and then Q (1 CPU, 1 KiB) cannot start although 4 CPUs are idle,
    because no node has memory left; it starts when P ends."""
    #   node 0 (4 CPUs, 8 KiB)        node 1 (4 CPUs, 8 KiB)
    #   t    0         10   15        t    0         10
    #   cpu  PPPPPPPPPPQQQQQ          cpu  PPPPPPPPPP
    #   cpu  PPPPPPPPPP.....          cpu  PPPPPPPPPP
    #   cpu  ..........               cpu  ..........     <- idle CPUs, but 0 KiB free
    #   cpu  ..........               cpu  ..........
    jobs = [J(1, 0, 10, 4, mem=4), J(2, 1, 5, 1, mem=1)]
    run = run_jobs(jobs, TWO_NODES_8K, policy)
    assert run.starts == {1: 0, 2: 10}
    alloc = run.result.allocations
    assert alloc is not None
    p, q = alloc[run.number(1)], alloc[run.number(2)]
    assert p.nodes.tolist() == [0, 1] and p.cpus.tolist() == [2, 2]
    assert p.mem_per_cpu == 4 * 1024
    assert q.nodes.tolist() == [0] and q.cpus.tolist() == [1]


def test_memory_per_cpu_places_a_job_on_the_node_that_has_memory_left():
    """First fit skips a node with idle CPUs but no memory: B (4 CPUs, 1 KiB each) goes
    entirely to node 1 while node 0 still has 2 idle CPUs."""
    #   node 0: A holds 2 CPUs x 4 KiB = all 8 KiB  -> 2 idle CPUs, 0 KiB
    #   node 1: B holds 4 CPUs x 1 KiB
    #   t    0         10                 t    0         10
    #   cpu  AAAAAAAAAA                   cpu  .BBBBBBBBBB
    #   cpu  AAAAAAAAAA                   cpu  .BBBBBBBBBB
    #   cpu  ..........  (no memory)      cpu  .BBBBBBBBBB
    #   cpu  ..........                   cpu  .BBBBBBBBBB
    jobs = [J(1, 0, 10, 2, mem=4), J(2, 1, 10, 4, mem=1)]
    run = run_jobs(jobs, TWO_NODES_8K, "fcfs")
    assert run.starts == {1: 0, 2: 1}
    alloc = run.result.allocations
    assert alloc is not None
    a, b = alloc[run.number(1)], alloc[run.number(2)]
    assert a.nodes.tolist() == [0] and a.cpus.tolist() == [2]
    assert b.nodes.tolist() == [1] and b.cpus.tolist() == [4]


def test_conservative_keeps_node_level_promises_when_a_job_ends_early():
    """Conservative with memory per CPU: reservations are planned on nodes, and an early end
    must not let one reservation take another's node. 3 nodes x 4 CPUs x 2 KiB."""
    # Running from t=0: J1 1 CPU x 1 KiB on n0 (until 34), J4 2 CPUs on n0 (until 32),
    # J5 1 CPU x 2 KiB on n1 (until 33).
    # t=31 (in queue order):
    #   J11 2 CPUs x 2 KiB: one CPU on each of two nodes with 2 KiB free -> reserved 33 (n1, n2)
    #   J18 1 CPU, requests 2 s (runs 1 s) -> starts on n0, believed to end at 33
    #   J8  8 CPUs, 2 s -> reserved 32..34 on n0: 2, n1: 3, n2: 3 (n0 holds J1 and J18)
    #   J7  1 CPU x 1 KiB, requests 3 s -> reserved 33: n0 is the only node with a CPU
    #       (4 - J1 - J8's 2) and 1 KiB free then (n2's memory goes to J11)
    #
    #   node n0 at t = 33, as planned at 31:  J1 | J8 J8 | J7   (4 CPUs; 1 + 1 KiB)
    #
    # t=32: J18 ends 1 s early. J7 must still start by 33 (or earlier).
    #       Regression: promises used to keep only their time and be re-booked first fit,
    #       so J8 took 3 CPUs on n0 (J18's was free now) and J7 could only start at 34.
    jobs = [
        J(1, 0, 34, 1, mem=1),
        J(5, 0, 33, 1, mem=2),
        J(4, 0, 32, 2),
        J(11, 31, 1, 2, mem=2),
        J(18, 31, 1, 1, requested=2),
        J(8, 31, 2, 8),
        J(7, 31, 1, 1, requested=3, mem=1),
    ]
    site = make_site(((3, 4, 2),))
    run = run_jobs(jobs, site, "conservative", {"record_reservations": True})
    promised = run.reservations()
    assert promised == {11: 33, 8: 32, 7: 33}
    late = {j: (promised[j], run.starts[j]) for j in promised if run.starts[j] > promised[j]}
    assert late == {}, f"jobs started after their first reservation (promised, actual): {late}"


def test_fcfs_keeps_queue_order_when_memory_blocks_the_head():
    """FCFS ("no job starts before an earlier one") must hold with memory as well: if the head
    cannot be placed on the nodes, nothing behind it may start.

    Regression: fcfs used to start every job its CPU profile planned for "now" and merely
    skip one the nodes could not place, so B started at 2, ahead of A."""
    #   node 0 (2 CPUs, 4 KiB): R holds 1 CPU x 4 KiB -> 1 idle CPU, 0 KiB
    #   node 1 (2 CPUs, 4 KiB): empty
    # t=1: A asks 2 CPUs x 4 KiB: 3 CPUs are idle, but only node 1 has memory (for 1 of them)
    #      -> A cannot start until R ends at 100.
    # t=2: B asks 1 CPU x 1 KiB: it fits on node 1, but FCFS must keep it behind A.
    # Expected: R 0..100; A 100..110 (1 CPU x 4 KiB on each node: all the memory);
    #           B 110..120, after A.
    # (The bug gave B at 2 on node 1, ahead of A: {1: 0, 2: 100, 3: 2}.)
    jobs = [J(1, 0, 100, 1, mem=4), J(2, 1, 10, 2, mem=4), J(3, 2, 10, 1, mem=1)]
    site = make_site(((2, 2, 4),))
    run = run_jobs(jobs, site, "fcfs")
    assert run.starts == {1: 0, 2: 100, 3: 110}


@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative"])
def test_backfilling_does_not_starve_a_head_blocked_by_memory(policy):
    """EASY gives the first waiting job a reservation and backfills only jobs that do not
    delay it (conservative: every job); that must hold when memory, not CPUs, blocks it.
    FCFS gets the same schedule here by never letting anything pass H.

    Regression: with a CPU-only availability profile, H (its CPU free, its memory not) was
    planned for "now", deferred at placement and never reserved; jobs 3..6 kept passing it
    and it started only at 36, when the stream stopped.

    One node: 4 CPUs, 4 KiB. R: 1 CPU x 2 KiB, 0..10. H (t=1): 1 CPU x 4 KiB, the whole
    node's memory: it fits once R ends, at 10. Jobs 3..6 (t=5, 12, 19, 26): 1 CPU x 2 KiB,
    10 s each; each fits beside R or beside another 2 KiB job, but would hold memory H needs
    at its reservation, so none may start before H.
    """
    #   expected                                   memory in use (KiB)
    #   t     0         10        20        30     0..10: 2   10..20: 4   20..40: 4
    #   cpu   RRRRRRRRRRHHHHHHHHHH33333333335555555555
    #   cpu   ....................44444444446666666666
    #
    #   the bug: 3 at 5, 4 at 12, 5 at 19, 6 at 26 (each beside the previous one,
    #   2 + 2 KiB), and H, with never more than 2 KiB free, only at 36.
    jobs = [
        J(1, 0, 10, 1, mem=2),
        J(2, 1, 10, 1, mem=4),
        J(3, 5, 10, 1, mem=2),
        J(4, 12, 10, 1, mem=2),
        J(5, 19, 10, 1, mem=2),
        J(6, 26, 10, 1, mem=2),
    ]
    site = make_site(((1, 4, 4),))
    run = run_jobs(jobs, site, policy)
    assert run.starts[2] == 10, f"H starved: {run.starts}"
    assert run.starts == {1: 0, 2: 10, 3: 20, 4: 20, 5: 30, 6: 30}


@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative"])
def test_kill_at_walltime_ends_job_at_its_request(policy):
    """kill_at_walltime: true -> K (runs 100 s, requested 60) is killed at 60 and W, which
    needs the whole machine, starts then; false -> K runs its full 100 s and W waits."""
    # killed:      t  0         60        70 ... 100
    #              K  KKKKKK...K (killed at 60)
    #              W             WWWWWWWWWW (4 CPUs, 60..70)
    # not killed:  K  0..100, W 100..110.  N (1 CPU, 10 s, requests 20) completes normally.
    jobs = [J(1, 0, 100, 1, requested=60), J(2, 0, 10, 1, requested=20), J(3, 1, 10, 4)]
    killing = make_site(((1, 4),), kill_at_walltime=True)
    run = run_jobs(jobs, killing, policy)
    assert run.starts == {1: 0, 2: 0, 3: 60}
    assert run.ends == {1: 60, 2: 10, 3: 70}
    assert run.status == {1: "killed", 2: "completed", 3: "completed"}

    patient = make_site(((1, 4),), kill_at_walltime=False)
    run = run_jobs(jobs, patient, policy)
    assert run.starts == {1: 0, 2: 0, 3: 100}
    assert run.ends == {1: 100, 2: 10, 3: 110}
    assert run.status == {1: "completed", 2: "completed", 3: "completed"}


@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative"])
def test_job_submitted_when_another_finishes_uses_its_cpus_at_once(policy):
    """Finishes are applied before submits at one instant: B, submitted at 10 exactly when A
    (4 CPUs) ends, starts at 10. C is submitted at the same instant on a later trace line, so
    it is queued behind B and starts when B ends."""
    #   t     0         10   15   20
    #   cpu   AAAAAAAAAABBBBBCCCCC
    #   (x4 CPUs: A, B and C each take the whole machine)
    jobs = [J(1, 0, 10, 4), J(2, 10, 5, 4), J(3, 10, 5, 4)]
    run = run_jobs(jobs, FOUR_CPUS, policy)
    assert run.starts == {1: 0, 2: 10, 3: 15}
    assert run.ends == {1: 10, 2: 15, 3: 20}


def test_ties_in_submit_time_are_queued_in_trace_line_order():
    """Jobs are numbered by submit time, then trace line: a trace listed out of submit order
    is replayed in submit order, and equal submits keep their line order."""
    # lines: 1: Y (submit 10)  2: A (submit 0)  3: X (submit 10)  -> order A, Y, X
    jobs = [J(7, 10, 5, 4), J(1, 0, 10, 4), J(3, 10, 5, 4)]
    run = run_jobs(jobs, FOUR_CPUS, "fcfs")
    assert run.workload.jobs["job_id"].tolist() == [1, 7, 3]
    assert run.starts == {1: 0, 7: 10, 3: 15}
    assert np.isfinite(run.table["end"]).all()
