"""The run service: a run live (recorded as it goes, resumed, stopped), a re-run forked from a
recorded one, a replay of an export against its record, and where two traces part."""
