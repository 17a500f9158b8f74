"""The host side of vswap-bench: the run record (settings, campaign plans, JSON files) in one typed place.

The in-guest agent and the workloads stay shell and C; everything the host writes or reads about a run goes
through this package, so a list of names (statuses, kernel variants, settings) exists once.
"""
