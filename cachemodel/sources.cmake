# Sources of the cachemodel stage, added to the one library (see the top-level CMakeLists.txt).
list(APPEND SP_CORE_SOURCES cachemodel/coalesce.c cachemodel/reuse.c cachemodel/lru.c)
list(APPEND SP_CORE_SOURCES cachemodel/memsys.c cachemodel/cost.c)
