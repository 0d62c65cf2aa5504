# Sources of the traces stage, added to the one library (see the top-level CMakeLists.txt).
list(APPEND SP_CORE_SOURCES traces/arch.c)
list(APPEND SP_CORE_SOURCES traces/schedule.c traces/trace.c traces/classes.c
     traces/dealing.c)
