"""The simulation core: the event loop, cluster state, availability profile and its compiled
kernels, queue limits, fairshare, ordering, time-shared nodes, workload preparation, and the
small :class:`Context` interface that policies see. It knows no policy by name."""
