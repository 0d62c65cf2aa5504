# Sources of the validation stage, added to the one library (see the top-level CMakeLists.txt).
list(APPEND SP_CORE_SOURCES
  validation/plan.c
)
