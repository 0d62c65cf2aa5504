# Sources of the ranking stage (cost, time model, reports), added to the one library.
list(APPEND SP_CORE_SOURCES
  rank/time.c
  rank/footprint.c
  rank/rank.c
  rank/refine.c
  rank/sample_cache.c
  rank/report.c
)
