"""The site model: clusters, queues, limits, fairshare and anti-starvation, loaded from YAML and
validated; units as admins write them; Alea machine files turned into cluster sections."""
