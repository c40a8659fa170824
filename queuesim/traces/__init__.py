"""Trace formats behind one reader registry (:mod:`queuesim.traces.registry`): SWF, Alea's
extended SWF, the Lublin-Feitelson generator and the DFRS annotation of a trace."""
